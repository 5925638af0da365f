#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "matrix/id_index.h"

namespace fabuild {
namespace {

std::vector<std::pair<std::size_t, std::size_t>> pairs(const std::vector<RepeatedId>& repeated) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const auto& r : repeated) out.emplace_back(r.index, r.earlier);
  return out;
}

// Each repeat names the first of its equal ids, however many came between them, in order.
TEST(RepeatedIds, NameTheFirstOfEqualIdsInOrder) {
  std::vector<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back("fa2.8." + std::to_string(i) + "-torch2.8-cu128-cp312-linux_x86_64");
  EXPECT_TRUE(repeated_ids(ids).empty());
  ids.push_back(ids[0]);
  ids.push_back(ids[999]);
  ids.push_back(ids[517]);
  ids.push_back(ids[0]);
  using P = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(pairs(repeated_ids(ids)), (std::vector<P>{{1000, 0}, {1001, 999}, {1002, 517}, {1003, 0}}));
}

TEST(RepeatedIds, TellIdsThatDifferOnlySlightlyApart) {
  std::vector<std::string> ids = {"fa2.8.3-torch2.8-cu128-cp312-linux_x86_64",
                                  "fa2.8.3-torch2.8-cu128-cp312-linux_x86_6",
                                  "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64-minimal", ""};
  EXPECT_TRUE(repeated_ids(ids).empty());
  ids.emplace_back("");
  using P = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(pairs(repeated_ids(ids)), (std::vector<P>{{4, 3}}));
  EXPECT_TRUE(repeated_ids(std::vector<std::string>{}).empty());
}

}  // namespace
}  // namespace fabuild
