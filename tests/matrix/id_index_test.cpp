#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "matrix/id_index.h"

namespace fabuild {
namespace {

// The first of two equal ids is the one reported, however many came between them, and past
// the capacity the index was made for.
TEST(IdIndex, FindsTheEarlierOfTwoEqualIds) {
  std::vector<std::string> ids;
  IdIndex index(2, [&](std::size_t i) { return ids[i]; });
  for (int i = 0; i < 1000; ++i) {
    ids.push_back("fa2.8." + std::to_string(i) + "-torch2.8-cu128-cp312-linux_x86_64");
    EXPECT_FALSE(index.add(ids.back(), ids.size() - 1).has_value()) << ids.back();
  }
  EXPECT_EQ(index.add("fa2.8.0-torch2.8-cu128-cp312-linux_x86_64", 1000), 0u);
  EXPECT_EQ(index.add("fa2.8.999-torch2.8-cu128-cp312-linux_x86_64", 1000), 999u);
  EXPECT_EQ(index.add(ids[517], 1000), 517u);
}

TEST(IdIndex, TellsIdsThatDifferOnlySlightlyApart) {
  std::vector<std::string> ids = {"fa2.8.3-torch2.8-cu128-cp312-linux_x86_64",
                                  "fa2.8.3-torch2.8-cu128-cp312-linux_x86_6",
                                  "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64-minimal", ""};
  IdIndex index(ids.size(), [&](std::size_t i) { return ids[i]; });
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_FALSE(index.add(ids[i], i).has_value()) << ids[i];
  EXPECT_EQ(index.add("", 4), 3u);
}

}  // namespace
}  // namespace fabuild
