// A row not yet built plans by its nearest torch sibling's record (costs/borrowed.h).

#include "costs/borrowed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "costs/row_costs.h"
#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;

std::vector<Cell> cells_of(const std::string& yaml) { return expand(parse_matrix(yaml, "m.yaml")).cells; }

std::vector<std::string> strings(const std::vector<Version>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.str());
  return out;
}

TEST(BorrowedCosts, TheNearestOlderSeriesFirstThenTheNearestNewer) {
  const auto cells =
      cells_of("package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.12\"]\ncuda: [\"13.0\"]\npython: [cp312]\n");
  ASSERT_EQ(cells.size(), 1U);
  const std::vector<Version> series = {*Version::parse("2.9"),  *Version::parse("2.13"), *Version::parse("2.11"),
                                       *Version::parse("2.12"), *Version::parse("2.15"), *Version::parse("2.11.0")};
  EXPECT_THAT(strings(borrow_order(cells[0], series)), ElementsAre("2.11", "2.9", "2.13", "2.15"));
  EXPECT_TRUE(borrow_order(cells[0], {*Version::parse("2.12")}).empty());
}

// The sibling is the row the same matrix makes for that series: the same key.
TEST(BorrowedCosts, TheSiblingIsTheRowOfTheOtherSeries) {
  const auto cells = cells_of(
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.11\", \"2.12\"]\ncuda: [\"13.0\"]\n"
      "python: [cp312]\narchs: \"90\"\nprofile: [minimal]\n");
  ASSERT_EQ(cells.size(), 2U);
  ASSERT_NE(remote_row_key(cells[0]), remote_row_key(cells[1]));
  EXPECT_EQ(remote_row_key(sibling_for(cells[1], cells[0].torch)), remote_row_key(cells[0]));
  EXPECT_EQ(remote_row_key(sibling_for(cells[0], cells[1].torch)), remote_row_key(cells[1]));
}

TEST(BorrowedCosts, OnlyAPerSeriesWheelBorrows) {
  const auto wheel = cells_of(
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\n"
      "python: [cp312]\n");
  EXPECT_TRUE(may_borrow(wheel.at(0)));
  const auto library = cells_of(
      "package: flash-attn-3\nversions: [\"3.0.0\"]\nartifact: [library]\ncuda: [\"13.0\"]\nprofile: [minimal]\n"
      "source: {path: /src/flash-attention}\n");
  ASSERT_FALSE(library.empty());
  EXPECT_FALSE(may_borrow(library.at(0)));
}

}  // namespace
}  // namespace fabuild
