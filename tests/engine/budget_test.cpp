#include "engine/budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/cell_env.h"
#include "engine/forecast.h"
#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Pair;

Cell cell_with(const std::string& extra) {
  const Expansion e = expand(
      parse_matrix("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n" + extra, "m.yaml"));
  return e.cells.at(0);
}

Budget machine(double cores, double gb) { return make_budget(Resources{cores, gb, "test", "test"}, BudgetSpec{}); }

// A cell's settings when it is the only one.
JobSettings settle_alone(const Cell& cell, const Budget& budget) { return forecast({cell}, budget).jobs.at(0); }

TEST(Budget, ReserveIsFifteenPercentOrFourGb) {
  EXPECT_DOUBLE_EQ(machine(16, 128).reserve_gb, 0.15 * 128);
  EXPECT_DOUBLE_EQ(machine(2, 20).reserve_gb, 4.0);
  EXPECT_DOUBLE_EQ(machine(2, 20).memory_gb, 16.0);
  EXPECT_DOUBLE_EQ(machine(2, 3).memory_gb, 0.0);
  const Budget b = make_budget(Resources{2, 20, "", ""}, BudgetSpec{8.0, 64.0, 0.0, 2});
  EXPECT_DOUBLE_EQ(b.memory_gb, 64.0);
  EXPECT_EQ(b.max_cells, 2);
}

TEST(Settle, OneArchNeedsOneNvccThread) {
  // The measured FlashAttention cell: sm_90 only, 16 cores, ~109 GB for builds.
  const JobSettings s = settle_alone(cell_with("archs: \"90\"\n"), machine(16, 128));
  EXPECT_EQ(s.nvcc_threads, 1);
  EXPECT_EQ(s.max_jobs, 16);
  EXPECT_DOUBLE_EQ(s.gb_per_job, 5.0);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_THAT(s.notes[0], HasSubstr("NVCC_THREADS 2 -> 1"));
}

TEST(Settle, MemoryBoundsJobs) {
  const JobSettings s =
      settle_alone(cell_with("archs: \"80;90;100;120\"\nbuild: {nvcc_threads: 4}\n"), machine(64, 100));
  EXPECT_EQ(s.nvcc_threads, 4);
  EXPECT_DOUBLE_EQ(s.gb_per_job, 20.0);
  EXPECT_EQ(s.max_jobs, 4);  // 85 GB / 20 GB
  EXPECT_LE(s.peak_gb(), 85.0);
}

TEST(Settle, MaxJobsIsACapAndSaysWhenLowered) {
  const JobSettings s = settle_alone(cell_with("archs: \"80;90\"\nbuild: {max_jobs: 48}\n"), machine(2, 24));
  EXPECT_EQ(s.max_jobs, 1);
  EXPECT_THAT(s.notes, Contains(HasSubstr("max_jobs 48 -> 1: 48 jobs x 10.0 GB = 480 GB")));
  const JobSettings low = settle_alone(cell_with("archs: \"80;90\"\nbuild: {max_jobs: 2}\n"), machine(64, 256));
  EXPECT_EQ(low.max_jobs, 2);
  EXPECT_TRUE(low.notes.empty());
}

TEST(Settle, AlwaysLetsOneJobRun) {
  const JobSettings s = settle_alone(cell_with("archs: \"80;90\"\n"), machine(1, 6));
  EXPECT_EQ(s.max_jobs, 1);
  EXPECT_THAT(s.notes, Contains(HasSubstr("holds less than one job")));
}

TEST(CellEnv, CarriesTheBuildContract) {
  const Cell c = cell_with("archs: \"80;90\"\nenv: {CC: gcc-12}\n");
  const EnvList env = cell_build_env(c);
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTENTION_FORCE_BUILD", "TRUE")));
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTN_CUDA_ARCHS", "80;90")));
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTN_LOCAL_VERSION", "cu128torch2.8cxx11abiTRUE")));
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTENTION_FORCE_CXX11_ABI", "TRUE")));
  EXPECT_THAT(env, ::testing::Not(Contains(Pair("MAX_JOBS", ::testing::_))));  // the runner's: runner_test.cpp
  EXPECT_THAT(env, Contains(Pair("CC", "gcc-12")));
}

TEST(Budget, ARocmCellCompilesWithHipccOneThreadAJob) {
  const Expansion e = expand(parse_matrix(
      "versions: [2.8.3]\ntorch: [\"2.8\"]\nrocm: [\"6.3\"]\npython: [cp312]\nprovision: container\n", "m.yaml"));
  ASSERT_EQ(e.cells.size(), 1U);
  const JobSettings s = settle_alone(e.cells[0], machine(16, 128));
  EXPECT_EQ(s.nvcc_threads, 0) << "no NVCC_THREADS for hipcc";
  EXPECT_TRUE(s.notes.empty()) << "no note about nvcc splitting archs";
  EXPECT_DOUBLE_EQ(s.gb_per_job, kDefaultGbPerThread);
  EXPECT_GT(s.max_jobs, 1);
  EXPECT_EQ(jobs_text(s), std::to_string(s.max_jobs));
}

TEST(Budget, AWindowsCellRunsOneJobUntilItsMemoryPerJobIsGiven) {
  const JobSettings unmeasured = settle_alone(cell_with("platform: [win_amd64]\nprovision: host\n"), machine(16, 128));
  EXPECT_EQ(unmeasured.max_jobs, 1);
  ASSERT_FALSE(unmeasured.notes.empty());
  EXPECT_THAT(unmeasured.notes[0], HasSubstr("MAX_JOBS 1 on Windows: the Windows manual build's setting"));
  const JobSettings measured = settle_alone(
      cell_with("platform: [win_amd64]\nprovision: host\nbuild: {memory_per_thread_gb: 4}\n"), machine(16, 128));
  EXPECT_GT(measured.max_jobs, 1);
  const JobSettings capped =
      settle_alone(cell_with("platform: [win_amd64]\nprovision: host\nbuild: {max_jobs: 3}\n"), machine(16, 128));
  EXPECT_EQ(capped.max_jobs, 3);
  EXPECT_GT(settle_alone(cell_with(""), machine(16, 128)).max_jobs, 1) << "Linux cells are not capped";
}

}  // namespace
}  // namespace fabuild
