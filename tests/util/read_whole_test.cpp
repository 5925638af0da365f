#include "util/read_whole.h"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

TEST(ReadTail, FromAnOffsetAndNoMoreThanTheLastBytes) {
  test::ScratchDir dir("read-tail");
  const auto path = dir.path() / "log";
  std::ofstream(path, std::ios::binary) << "0123456789";
  EXPECT_EQ(read_tail(path, 0, 100), "0123456789");
  EXPECT_EQ(read_tail(path, 4, 100), "456789");  // a step's own output, from where it began
  EXPECT_EQ(read_tail(path, 0, 3), "789");       // the last bytes only
  EXPECT_EQ(read_tail(path, 8, 5), "89");        // the later of the two limits
  EXPECT_EQ(read_tail(path, 10, 5), "");
  EXPECT_EQ(read_tail(dir.path() / "missing", 0, 5), "");
  EXPECT_EQ(read_whole(path), "0123456789");
  EXPECT_EQ(read_whole(dir.path() / "missing"), std::nullopt);
}

}  // namespace
}  // namespace fabuild
