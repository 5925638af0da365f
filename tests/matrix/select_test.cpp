#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "matrix/select.h"
#include "support.h"

namespace fabuild {
namespace {

using test::expand_yaml;
using test::ids;
using test::kBase;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string select_error(const Expansion& e, const Filters& f) {
  try {
    select_cells(e, f);
  } catch (const UserError& err) {
    EXPECT_EQ(err.code(), kExitBadConfig);
    return std::string(err.what()) + " | " + err.hint();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(Select, AxisFiltersAllMustMatch) {
  const Expansion all = expand_yaml(kBase);
  Filters f;
  f[Axis::kTorch] = {"2.8"};
  f[Axis::kPython] = {"3.12"};
  f[Axis::kGpu] = {"cu128", "12.6"};
  EXPECT_THAT(ids(select_cells(all, f).cells),
              ElementsAre("fa2.8.3-torch2.8-cu126-cp312-linux_x86_64", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64"));
}

TEST(Select, ATorchRangePicksTheSeriesInItAndABoundAfterItsCommaIsPartOfIt) {
  const Expansion all = expand_yaml(kBase);  // torch 2.7 and 2.8
  const auto series = [&](std::vector<std::string> torch) {
    Filters f;
    f[Axis::kTorch] = std::move(torch);
    std::set<std::string> out;
    for (const auto& c : select_cells(all, f).cells) out.insert(c.torch.str());
    return out;
  };
  EXPECT_EQ(series({">=2.8"}), (std::set<std::string>{"2.8"}));
  EXPECT_EQ(series({">=2.7", "<2.8"}), (std::set<std::string>{"2.7"}));  // --torch '>=2.7,<2.8'
  EXPECT_EQ(series({">=2.7", "<2.8", "2.8"}), (std::set<std::string>{"2.7", "2.8"}));
  Filters beyond;
  beyond[Axis::kTorch] = {">=2.9"};
  EXPECT_THAT(select_error(all, beyond),
              HasSubstr("--torch >=2.9 matches no cell of this matrix | its torch values are"));
  Filters bound_alone;
  bound_alone[Axis::kTorch] = {"<2.8"};
  EXPECT_THAT(select_error(all, bound_alone),
              HasSubstr("--torch <2.8: not a torch value | write a series (2.12), a pin (2.12.1), a range"));
}

TEST(Select, GlobsAndCommaLists) {
  const Expansion all = expand_yaml(kBase);
  Filters f;
  f[Axis::kPython] = {"cp31*"};
  f[Axis::kVersion] = {"2.8.*"};
  EXPECT_EQ(select_cells(all, f).cells.size(), 8u);
  Filters only;
  only.only = {"*-torch2.7-cu126-*", "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64"};
  EXPECT_THAT(ids(select_cells(all, only).cells),
              ElementsAre("fa2.8.3-torch2.7-cu126-cp311-linux_x86_64", "fa2.8.3-torch2.7-cu126-cp312-linux_x86_64",
                          "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64"));
}

// Selecting from an expansion that is given up moves its cells instead of copying them: the
// same cells, and their ids kept in step.
TEST(Select, FromAMovedExpansionPicksTheSame) {
  for (const bool any_filter : {false, true}) {
    Filters f;
    if (any_filter) f[Axis::kPython] = {"cp312"};
    const Expansion copied = select_cells(expand_yaml(kBase), f);
    Expansion all = expand_yaml(kBase);
    const Expansion moved = select_cells(std::move(all), f);
    EXPECT_EQ(ids(moved.cells), ids(copied.cells));
    EXPECT_EQ(moved.ids, ids(moved.cells));
    EXPECT_EQ(copied.ids, ids(copied.cells));
    EXPECT_EQ(moved.cells.size(), any_filter ? 4u : 8u);
  }
}

TEST(Select, TorchSeriesMatchesPins) {
  const Expansion all =
      expand_yaml("versions: [2.8.3]\ntorch: [\"2.8.0\", \"2.7\"]\ncuda: [\"12.8\"]\npython: [cp312]\n");
  Filters f;
  f[Axis::kTorch] = {"2.8"};
  EXPECT_THAT(ids(select_cells(all, f).cells), ElementsAre("fa2.8.3-torch2.8-cu128-cp312-linux_x86_64"));
}

TEST(Select, FilterValuesThatCanNeverMatchAreErrors) {
  const Expansion all = expand_yaml(kBase);
  Filters torch;
  torch[Axis::kTorch] = {"3.0"};
  EXPECT_EQ(select_error(all, torch), "--torch 3.0 matches no cell of this matrix | its torch values are 2.7, 2.8");
  Filters python;
  python[Axis::kPython] = {"cp99"};
  EXPECT_EQ(select_error(all, python),
            "--python cp99: unknown Python tag (did you mean 'cp39'?) | use a tag like cp312 (or 3.12), or a glob like "
            "'cp31*'");
  Filters glob;
  glob[Axis::kPython] = {"cp2*"};
  EXPECT_EQ(select_error(all, glob),
            "--python cp2* matches no cell of this matrix | its python values are cp311, cp312");
  Filters cuda;
  cuda[Axis::kGpu] = {"twelve"};
  EXPECT_EQ(select_error(all, cuda),
            "--cuda twelve: not a cuda value | see fabuild --help for the values each filter takes");
  Filters only;
  only.only = {"fa2.8.3-torch2.8-cu128-cp312-linux_x86"};
  EXPECT_EQ(select_error(all, only),
            "--only fa2.8.3-torch2.8-cu128-cp312-linux_x86 names no cell of this matrix (did you mean "
            "'fa2.8.3-torch2.8-cu128-cp312-linux_x86_64'?) | fabuild MATRIX --list prints every cell id");
}

TEST(Select, DroppedCellsAreSelectedTooSoThePlanSaysWhy) {
  const Expansion all =
      expand_yaml("versions: [2.8.3]\ntorch: [\"2.7\", \"2.9\"]\ncuda: [\"12.8\", \"13.0\"]\npython: [cp312]\n");
  Filters f;
  f[Axis::kTorch] = {"2.7"};
  f[Axis::kGpu] = {"13.0"};
  const Expansion picked = select_cells(all, f);
  EXPECT_TRUE(picked.cells.empty());
  ASSERT_EQ(picked.dropped.size(), 1u);
  EXPECT_THAT(picked.dropped[0].reasons[0], HasSubstr("CUDA 13 needs torch >= 2.9"));
}

TEST(Shard, ParsesKOverN) {
  EXPECT_EQ(parse_shard("2/4")->index, 2);
  EXPECT_EQ(parse_shard(" 1 / 1 ")->count, 1);
  for (const char* bad : {"0/4", "5/4", "2", "a/b", "1/0", "-1/2", "2/4/6"}) {
    EXPECT_FALSE(parse_shard(bad)) << bad;
  }
}

// Cells of random matrices: archs differ per CUDA set so costs differ.
std::vector<Cell> random_cells(std::mt19937& rng) {
  std::uniform_int_distribution<int> n(1, 4);
  std::string yaml = "versions: [";
  for (int i = 0, k = n(rng); i < k; ++i) yaml += (i ? ", " : "") + std::string("2.8.") + std::to_string(i);
  yaml += "]\ntorch: [\"2.8\", \"2.9\"]\ncuda: [\"12.6\", \"12.8\"]\npython: [";
  const char* py[] = {"cp310", "cp311", "cp312", "cp313"};
  for (int i = 0, k = n(rng); i < k; ++i) yaml += (i ? ", " : "") + std::string(py[i]);
  yaml += "]\narchs: {default: \"80\", \"12.8\": \"80;90;100;120\"}\n";
  return expand_yaml(yaml).cells;
}

TEST(Shard, EveryCellInExactlyOneShardAndBalanced) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const auto cells = random_cells(rng);
    const int n = std::uniform_int_distribution<int>(1, 7)(rng);
    std::map<std::string, int> seen;
    double max_cost = 0;
    double min_cost = 1e9;
    double biggest = 0;
    for (const auto& c : cells) biggest = std::max(biggest, expected_cost(c));
    for (int k = 1; k <= n; ++k) {
      double cost = 0;
      for (const auto& c : shard_cells(cells, {k, n}, Rows::kSplit)) {
        ++seen[c.id()];
        cost += expected_cost(c);
      }
      max_cost = std::max(max_cost, cost);
      min_cost = std::min(min_cost, cost);
    }
    ASSERT_EQ(seen.size(), cells.size());
    for (const auto& [id, count] : seen) {
      ASSERT_EQ(count, 1) << id;
    }
    // Greedy by cost never leaves shards further apart than the largest cell.
    if (static_cast<int>(cells.size()) >= n) {
      EXPECT_LE(max_cost - min_cost, biggest) << "trial " << trial;
    }
  }
}

TEST(Shard, DeterministicWhateverTheInputOrder) {
  std::mt19937 rng(11);
  auto cells = random_cells(rng);
  const auto first = ids(shard_cells(cells, {2, 3}));
  std::shuffle(cells.begin(), cells.end(), rng);
  auto second = ids(shard_cells(cells, {2, 3}));
  std::vector<std::string> a = first;
  std::sort(a.begin(), a.end());
  std::sort(second.begin(), second.end());
  EXPECT_EQ(a, second);
}

}  // namespace
}  // namespace fabuild
