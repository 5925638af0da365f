// Shards for CI runners: coverage, balance by expected cost, determinism; `--shard auto`
// from the CI's own variables; the matrix's `ci:` section.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include <fmt/format.h>

#include "matrix/select.h"
#include "matrix/shard_auto.h"
#include "support.h"

namespace fabuild {
namespace {

using test::error_of;
using test::expand_yaml;
using test::ids;
using test::kBase;
using test::spec_of;
using ::testing::HasSubstr;

// `count` cells of one matrix with random arch lists of 1 to `max_archs` archs: costs differ
// as they do between CUDA sets and include entries.
std::vector<Cell> random_cells(std::mt19937& rng, int count, int max_archs) {
  const Cell base = expand_yaml(kBase).cells.front();
  std::uniform_int_distribution<int> archs(1, max_archs);
  const std::vector<int> known = {80, 86, 89, 90, 100, 120};
  std::vector<Cell> cells;
  for (int i = 0; i < count; ++i) {
    Cell c = base;
    c.version = *Version::parse(fmt::format("9.{}.{}", i / 10, i % 10));
    c.own_setup().archs.assign(known.begin(), known.begin() + archs(rng));
    cells.push_back(c);
  }
  return cells;
}

double cost_of(const std::vector<Cell>& cells) {
  double total = 0;
  for (const auto& c : cells) total += expected_cost(c);
  return total;
}

TEST(ShardBalance, EveryCellInExactlyOneShardForManyMatricesAndShardCounts) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 200; ++trial) {
    const int count = std::uniform_int_distribution<int>(0, 120)(rng);
    const auto cells = random_cells(rng, count, 6);
    const int n = std::uniform_int_distribution<int>(1, 40)(rng);
    std::map<std::string, int> seen;
    double biggest = 0;
    for (const auto& c : cells) biggest = std::max(biggest, expected_cost(c));
    double most = 0;
    double least = 1e18;
    for (int k = 1; k <= n; ++k) {
      const auto part = shard_cells(cells, {k, n}, Rows::kSplit);
      for (const auto& c : part) ++seen[c.id()];
      most = std::max(most, cost_of(part));
      least = std::min(least, cost_of(part));
    }
    ASSERT_EQ(seen.size(), cells.size()) << "trial " << trial;
    for (const auto& [id, times] : seen) ASSERT_EQ(times, 1) << id << " in trial " << trial;
    if (cells.empty()) continue;
    // Greedy by cost, most expensive first (LPT): the last cell put on the costliest shard
    // went to the cheapest one, so no two shards are further apart than the largest cell...
    EXPECT_LE(most - least, biggest) << "trial " << trial;
    // ...and the costliest is within 4/3 of the best any split could do, which is at least
    // the average and at least the largest cell.
    const double lower_bound = std::max(cost_of(cells) / n, biggest);
    EXPECT_LE(most, lower_bound * 4.0 / 3.0 + 1e-9)
        << "trial " << trial << ": " << count << " cells, " << n << " shards";
  }
}

TEST(ShardBalance, BalancesCostNotCount) {
  // One cell of six archs and six cells of one arch, in two shards: 6 and 6, that is one
  // cell against six; splitting by count (4 and 3 cells) would give 8 against 4 at best.
  std::mt19937 rng(1);
  auto cells = random_cells(rng, 7, 1);
  cells[3].own_setup().archs = {80, 86, 89, 90, 100, 120};
  const auto first = shard_cells(cells, {1, 2}, Rows::kSplit);
  const auto second = shard_cells(cells, {2, 2}, Rows::kSplit);
  EXPECT_EQ(cost_of(first), 6);
  EXPECT_EQ(cost_of(second), 6);
  EXPECT_EQ(std::min(first.size(), second.size()), 1u);
  EXPECT_EQ(std::max(first.size(), second.size()), 6u);
}

TEST(ShardBalance, SameShardsWhateverTheOrderOfTheCells) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 20; ++trial) {
    auto cells = random_cells(rng, 60, 4);
    const int n = std::uniform_int_distribution<int>(2, 9)(rng);
    std::vector<std::vector<std::string>> before;
    for (int k = 1; k <= n; ++k) before.push_back(ids(shard_cells(cells, {k, n}, Rows::kSplit)));
    std::shuffle(cells.begin(), cells.end(), rng);
    for (int k = 1; k <= n; ++k) {
      const auto part = shard_cells(cells, {k, n}, Rows::kSplit);
      auto after = ids(part);
      // The shard keeps the order the cells came in...
      std::vector<std::string> in_input_order;
      for (const auto& c : cells) {
        if (std::find(after.begin(), after.end(), c.id()) != after.end()) in_input_order.push_back(c.id());
      }
      EXPECT_EQ(after, in_input_order);
      // ...and holds the same cells as before the shuffle.
      auto expected = before[static_cast<std::size_t>(k - 1)];
      std::sort(after.begin(), after.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(after, expected) << "shard " << k << "/" << n << " in trial " << trial;
    }
  }
}

TEST(ShardBalance, MoreShardsThanCellsLeavesSomeEmpty) {
  std::mt19937 rng(5);
  const auto cells = random_cells(rng, 3, 3);
  std::size_t total = 0;
  std::size_t empty = 0;
  for (int k = 1; k <= 8; ++k) {
    const auto part = shard_cells(cells, {k, 8}, Rows::kSplit);
    EXPECT_LE(part.size(), 1u);
    total += part.size();
    empty += part.empty() ? 1 : 0;
  }
  EXPECT_EQ(total, 3u);
  EXPECT_EQ(empty, 5u);
}

// --shard auto

Environment env_of(const std::map<std::string, std::string>& vars) {
  Environment env;
  for (const auto& [k, v] : vars) env.set(k, v);
  return env;
}

// The parallel-job variables of GitLab and Buildkite, as app/ci_providers.cpp's rows give them
// (tests/app/ci_providers_test.cpp checks that they do).
const std::vector<ShardVariables> kCi = {
    {"CI_NODE_INDEX", "CI_NODE_TOTAL", 1, "GitLab parallel:"},
    {"BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0, "Buildkite parallelism:"}};
ShardFromEnv from_env(const Environment& env) { return shard_from_environment(env, kCi); }

std::string auto_error(std::map<std::string, std::string> vars) {
  try {
    from_env(env_of(std::move(vars)));
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), kExitBadConfig);
    EXPECT_THAT(e.hint(), HasSubstr("CI_NODE_INDEX/CI_NODE_TOTAL"));
    return e.message();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(ShardAuto, GitLabIsOneBased) {
  const auto s = from_env(env_of({{"CI_NODE_INDEX", "3"}, {"CI_NODE_TOTAL", "4"}}));
  EXPECT_EQ(s.shard.index, 3);
  EXPECT_EQ(s.shard.count, 4);
  EXPECT_EQ(s.source, "CI_NODE_INDEX=3, CI_NODE_TOTAL=4 (GitLab parallel:)");
}

TEST(ShardAuto, GitLabWithoutParallelIsTheWholeMatrix) {
  const auto s = from_env(env_of({{"CI_NODE_TOTAL", "1"}}));
  EXPECT_EQ(s.shard.index, 1);
  EXPECT_EQ(s.shard.count, 1);
}

TEST(ShardAuto, BuildkiteIsZeroBased) {
  const auto first = from_env(env_of({{"BUILDKITE_PARALLEL_JOB", "0"}, {"BUILDKITE_PARALLEL_JOB_COUNT", "5"}}));
  EXPECT_EQ(first.shard.index, 1);
  EXPECT_EQ(first.shard.count, 5);
  const auto last = from_env(env_of({{"BUILDKITE_PARALLEL_JOB", "4"}, {"BUILDKITE_PARALLEL_JOB_COUNT", "5"}}));
  EXPECT_EQ(last.shard.index, 5);
}

TEST(ShardAuto, FabuildShardComesFirst) {
  const auto s = from_env(env_of(
      {{"FABUILD_SHARD", "2/7"}, {"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "2"}, {"BUILDKITE_PARALLEL_JOB", "0"}}));
  EXPECT_EQ(s.shard.index, 2);
  EXPECT_EQ(s.shard.count, 7);
  EXPECT_EQ(s.source, "FABUILD_SHARD=2/7");
}

TEST(ShardAuto, MissingOrBadValuesAreErrorsNamingTheVariable) {
  EXPECT_EQ(auto_error({}), "--shard auto: no CI parallel-job variables are set");
  EXPECT_EQ(auto_error({{"FABUILD_SHARD", "3/2"}}), "--shard auto: FABUILD_SHARD='3/2' is not K/N with 1 <= K <= N");
  EXPECT_EQ(auto_error({{"CI_NODE_INDEX", "2"}}),
            "--shard auto: CI_NODE_INDEX is set but CI_NODE_TOTAL is not (GitLab parallel:)");
  EXPECT_EQ(auto_error({{"CI_NODE_TOTAL", "4"}}),
            "--shard auto: CI_NODE_TOTAL=4 is set but CI_NODE_INDEX is not (GitLab parallel:)");
  EXPECT_EQ(auto_error({{"CI_NODE_INDEX", "0"}, {"CI_NODE_TOTAL", "4"}}),
            "--shard auto: CI_NODE_INDEX=0 is outside 1..4 for CI_NODE_TOTAL=4 (GitLab parallel:, 1-based)");
  EXPECT_EQ(auto_error({{"CI_NODE_INDEX", "two"}, {"CI_NODE_TOTAL", "4"}}),
            "--shard auto: CI_NODE_INDEX='two' is not a whole number");
  EXPECT_EQ(auto_error({{"BUILDKITE_PARALLEL_JOB", "5"}, {"BUILDKITE_PARALLEL_JOB_COUNT", "5"}}),
            "--shard auto: BUILDKITE_PARALLEL_JOB=5 is outside 0..4 for BUILDKITE_PARALLEL_JOB_COUNT=5 (Buildkite "
            "parallelism:, 0-based)");
  EXPECT_EQ(auto_error({{"BUILDKITE_PARALLEL_JOB", "0"}, {"BUILDKITE_PARALLEL_JOB_COUNT", "0"}}),
            "--shard auto: BUILDKITE_PARALLEL_JOB_COUNT=0 must be at least 1 (Buildkite parallelism:)");
}

TEST(ShardAuto, EveryJobOfAParallelJobGetsItsOwnShard) {
  // What N GitLab jobs (1-based) and N Buildkite jobs (0-based) get: 1/N .. N/N, each once.
  for (int n = 1; n <= 12; ++n) {
    for (int job = 0; job < n; ++job) {
      const auto gitlab =
          from_env(env_of({{"CI_NODE_INDEX", std::to_string(job + 1)}, {"CI_NODE_TOTAL", std::to_string(n)}}));
      const auto buildkite = from_env(env_of(
          {{"BUILDKITE_PARALLEL_JOB", std::to_string(job)}, {"BUILDKITE_PARALLEL_JOB_COUNT", std::to_string(n)}}));
      EXPECT_EQ(gitlab.shard.index, job + 1);
      EXPECT_EQ(buildkite.shard.index, job + 1);
      EXPECT_EQ(gitlab.shard.count, n);
      EXPECT_EQ(buildkite.shard.count, n);
    }
  }
}

// ci:

TEST(CiSection, DefaultsWithoutIt) {
  const MatrixSpec spec = spec_of(kBase);
  EXPECT_EQ(spec.ci.runner, "ubuntu-latest");
  EXPECT_EQ(spec.ci.max_entries, 256);
  EXPECT_EQ(spec.ci.setup_s, 1800);
  EXPECT_EQ(spec.ci.per_arch_s, 7200);
  EXPECT_EQ(spec.ci.max_timeout_s, 21600);
}

TEST(CiSection, ReadsEveryKey) {
  const MatrixSpec spec = spec_of(std::string(kBase) +
                                  "ci: {runner: gpu-builder, max_entries: 20, setup_time: 15m, time_per_arch: 1h30m, "
                                  "max_timeout: 24h}\n");
  EXPECT_EQ(spec.ci.runner, "gpu-builder");
  EXPECT_EQ(spec.ci.max_entries, 20);
  EXPECT_EQ(spec.ci.setup_s, 900);
  EXPECT_EQ(spec.ci.per_arch_s, 5400);
  EXPECT_EQ(spec.ci.max_timeout_s, 86400);
}

TEST(CiSection, ErrorsSayWhereAndWhat) {
  const auto too_many = error_of(std::string(kBase) + "ci:\n  max_entries: 300\n");
  EXPECT_EQ(too_many.message, "m.yaml:7:16: ci.max_entries is 300, but a GitHub Actions matrix holds at most 256 jobs");
  EXPECT_EQ(too_many.code, kExitBadConfig);
  EXPECT_EQ(error_of(std::string(kBase) + "ci:\n  runnr: x\n").message,
            "m.yaml:7:3: unknown key 'runnr' in ci (did you mean 'runner'?)");
  EXPECT_EQ(error_of(std::string(kBase) + "ci:\n  setup_time: soon\n").message,
            "m.yaml:7:15: ci.setup_time must be a duration like 90m, 3h, 1h30m or seconds, not 'soon'");
  EXPECT_EQ(error_of(std::string(kBase) + "ci:\n  setup_time: 2h\n  max_timeout: 1h\n").message,
            "m.yaml:8:16: ci.max_timeout (60 min) leaves no time for a cell after ci.setup_time (120 min)");
  EXPECT_EQ(error_of(std::string(kBase) + "ci:\n  runner: [a, b]\n").message,
            "m.yaml:7:11: ci.runner must be a single value, not a list");
}

}  // namespace
}  // namespace fabuild
