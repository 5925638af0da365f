#include "engine/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/forecast.h"
#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Budget budget(double cores, double gb, int max_cells = 0) {
  Budget b;
  b.cores = cores;
  b.memory_gb = gb;
  b.max_cells = max_cells;
  return b;
}

TEST(Scheduler, SplitsTheBudgetBetweenCells) {
  // 16 cores, 80 GB, four one-arch cells of 5 GB jobs: 16 jobs in all, 4 each.
  // (Eight such cells would still run four at a time: no fewer than kMinJobsPerCell each.)
  Scheduler s(budget(16, 80), std::vector<Demand>(4, Demand{1, 5, 1, std::nullopt}));
  const auto g = s.start_more();
  ASSERT_EQ(g.size(), 4u);
  for (const auto& grant : g) EXPECT_EQ(grant.max_jobs, 4);
  EXPECT_DOUBLE_EQ(s.used_gb(), 80);
  EXPECT_TRUE(s.start_more().empty());
}

TEST(Scheduler, NoFewerThanFourJobsEachWhileSharing) {
  Scheduler s(budget(16, 80), std::vector<Demand>(8, Demand{1, 5, 1, std::nullopt}));
  const auto g = s.start_more();
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[3].max_jobs, 4);
}

TEST(Scheduler, JobsCapLimitsCellsAtOnce) {
  Scheduler s(budget(16, 80, 2), std::vector<Demand>(4, Demand{1, 5, 1, std::nullopt}));
  const auto g = s.start_more();
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].max_jobs, 8);
  s.finish(g[0].cell);
  const auto next = s.start_more();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].max_jobs, 8);
}

TEST(Scheduler, ARowsFollowersWaitForItsFirstCellWhichGetsTheWholeBudget) {
  // Four Python tags of one row (the last three after the first) and one cell of another row,
  // on 16 cores: the first of each row share the machine; the followers start as the first of
  // their row ends, each with a fair share of what is left.
  std::vector<Demand> d(5, Demand{1, 5, 1, {}});
  for (std::size_t i : {1U, 2U, 3U}) d[i].after = 0;
  Scheduler s(budget(16, 200), d);
  const auto first = s.start_more();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].cell, 0u);
  EXPECT_EQ(first[1].cell, 4u);
  EXPECT_EQ(first[0].max_jobs, 8);
  EXPECT_TRUE(s.start_more().empty());
  s.finish(4);
  EXPECT_TRUE(s.start_more().empty());  // the followers still wait for cell 0
  s.finish(0);
  const auto rest = s.start_more();
  ASSERT_EQ(rest.size(), 3u);
  for (const auto& g : rest) EXPECT_EQ(g.max_jobs, 5);
  // On two cores the three followers do not wait for four jobs each: two start at one job.
  std::vector<Demand> small(4, Demand{1, 5, 1, {}});
  for (std::size_t i : {1U, 2U, 3U}) small[i].after = 0;
  Scheduler two(budget(2, 20), small);
  ASSERT_EQ(two.start_more().size(), 1u);
  two.finish(0);
  const auto followers = two.start_more();
  ASSERT_EQ(followers.size(), 2u);
  EXPECT_EQ(followers[0].max_jobs, 1);
  EXPECT_EQ(followers[1].max_jobs, 1);
  // Alone, a first cell gets everything.
  std::vector<Demand> row(4, Demand{1, 5, 1, {}});
  for (std::size_t i : {1U, 2U, 3U}) row[i].after = 0;
  Scheduler alone(budget(16, 200), row);
  const auto g = alone.start_more();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].max_jobs, 16);
}

TEST(Scheduler, ACellPastItsCompileGivesItsShareBackAndLetsItsFollowersStart) {
  // Two cores, one cell at a time at two jobs. The first one's compile ends: while it verifies,
  // imports and files, the next starts with the whole budget, and so do the cells that come
  // after it (their kernels are in the cache once its compile has ended).
  std::vector<Demand> d(3, Demand{1, 5, 1, {}});
  d[2].after = 0;
  Scheduler s(budget(2, 20), d);
  const auto first = s.start_more();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].cell, 0u);
  s.release(0);
  EXPECT_DOUBLE_EQ(s.used_cores(), 0);
  EXPECT_EQ(s.released(), 1u);
  EXPECT_FALSE(s.done());
  const auto next = s.start_more();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].cell, 1u);
  EXPECT_EQ(next[0].max_jobs, 2);
  s.release(0);  // twice is once
  EXPECT_EQ(s.released(), 1u);
  s.finish(0);
  EXPECT_EQ(s.released(), 0u);
  s.finish(1);
  const auto follower = s.start_more();
  ASSERT_EQ(follower.size(), 1u);
  EXPECT_EQ(follower[0].cell, 2u);
  s.finish(2);
  EXPECT_TRUE(s.done());
}

TEST(Scheduler, MaxCellsCountsCellsFinishingTheirLightSteps) {
  Scheduler s(budget(16, 80, 1), std::vector<Demand>(2, Demand{1, 5, 1, std::nullopt}));
  ASSERT_EQ(s.start_more().size(), 1u);
  s.release(0);
  EXPECT_TRUE(s.start_more().empty());  // the user asked for one cell at a time
  s.finish(0);
  EXPECT_EQ(s.start_more().size(), 1u);
}

TEST(Scheduler, LongestCellsFirst) {
  Scheduler s(budget(1, 100), {Demand{1, 5, 1, {}}, Demand{4, 5, 1, {}}, Demand{2, 5, 1, {}}, Demand{4, 5, 1, {}}});
  std::vector<std::size_t> order;
  while (!s.done()) {
    for (const auto& g : s.start_more()) {
      order.push_back(g.cell);
      s.finish(g.cell);
    }
  }
  EXPECT_THAT(order, ElementsAre(1, 3, 2, 0));
}

TEST(Scheduler, AlwaysLetsOneCellRunAndSaysSo) {
  Scheduler s(budget(1, 3), {Demand{1, 10, 2, {}}, Demand{1, 10, 2, {}}});
  auto g = s.start_more();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].max_jobs, 1);
  EXPECT_THAT(g[0].note, HasSubstr("holds less than one job"));
  EXPECT_TRUE(s.start_more().empty());  // the second waits for the first
  s.finish(g[0].cell);
  EXPECT_EQ(s.start_more().size(), 1u);
}

TEST(Scheduler, StopStartsNothingMore) {
  Scheduler s(budget(4, 20), std::vector<Demand>(6, Demand{1, 5, 1, std::nullopt}));
  const auto g = s.start_more();
  s.stop();
  for (const auto& grant : g) s.finish(grant.cell);
  EXPECT_TRUE(s.start_more().empty());
  EXPECT_TRUE(s.done());
}

// Many random matrices, cells finishing in random order: the budget is never exceeded (but for
// the one cell allowed to run alone), every cell starts exactly once, and something always runs.
TEST(Scheduler, RandomMatricesNeverExceedTheBudget) {
  std::mt19937 rng(2026);
  for (int trial = 0; trial < 500; ++trial) {
    const Budget b =
        budget(std::uniform_int_distribution<int>(1, 64)(rng), std::uniform_real_distribution<double>(2, 300)(rng),
               std::uniform_int_distribution<int>(0, 4)(rng));
    std::vector<Demand> demands;
    const int n = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int i = 0; i < n; ++i) {
      const int threads = std::uniform_int_distribution<int>(1, 4)(rng);
      std::optional<int> cap;
      if (rng() % 3 == 0) cap = std::uniform_int_distribution<int>(1, 64)(rng);
      demands.push_back(
          {static_cast<double>(threads), threads * std::uniform_real_distribution<double>(1, 8)(rng), threads, cap});
    }
    Scheduler s(b, demands);
    std::map<std::size_t, int> started;
    std::vector<std::size_t> running;
    while (!s.done()) {
      const bool was_idle = s.running() == 0;
      const auto grants = s.start_more();
      if (was_idle) {
        ASSERT_FALSE(grants.empty()) << "no progress in trial " << trial;
      }
      for (const auto& g : grants) {
        ASSERT_GE(g.max_jobs, 1);
        if (demands[g.cell].max_jobs) {
          ASSERT_LE(g.max_jobs, *demands[g.cell].max_jobs);
        }
        ++started[g.cell];
        running.push_back(g.cell);
      }
      const bool alone_over = s.running() == 1 && (s.used_gb() > b.memory_gb + 1e-9 || s.used_cores() > b.cores + 1e-9);
      if (!alone_over) {
        ASSERT_LE(s.used_gb(), b.memory_gb + 1e-9) << "trial " << trial;
        ASSERT_LE(s.used_cores(), b.cores + 1e-9) << "trial " << trial;
      } else {
        ASSERT_EQ(grants.size(), 1u);
        ASSERT_EQ(grants[0].max_jobs, 1);
      }
      if (b.max_cells > 0) {
        ASSERT_LE(s.running(), static_cast<std::size_t>(b.max_cells));
      }
      const std::size_t k = std::uniform_int_distribution<std::size_t>(0, running.size() - 1)(rng);
      s.finish(running[k]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    }
    ASSERT_EQ(started.size(), demands.size());
    for (const auto& [cell, count] : started) ASSERT_EQ(count, 1);
  }
}

TEST(Forecast, ThePlanShowsWhatEachCellGets) {
  const Expansion e = expand(
      parse_matrix("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.6\", \"12.8\"]\npython: [cp311, cp312]\n"
                   "archs: {default: \"90\", \"12.8\": \"80;90\"}\ntorch_index: https://torch-index.invalid/whl\n",
                   "m.yaml"));
  // 16 cores, 80 GB: the budget holds 8 two-arch jobs (10 GB, 2 cores each), so the two
  // two-arch cells start first, with 4 jobs each, and fill it. When one ends, a one-arch cell
  // (5 GB, 1 core a job) takes its share of the three cells left: 5 jobs.
  const Forecast f = forecast(e.cells, budget(16, 80));
  EXPECT_EQ(f.at_once, 2u);
  EXPECT_EQ(f.jobs[2].max_jobs, 4);
  EXPECT_EQ(f.jobs[2].nvcc_threads, 2);
  EXPECT_EQ(f.jobs[0].max_jobs, 5);
  EXPECT_EQ(f.jobs[0].nvcc_threads, 1);
}

}  // namespace
}  // namespace fabuild
