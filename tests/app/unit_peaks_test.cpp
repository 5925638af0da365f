// The memory gate's side in fabuild (costs/unit_peaks.h): a row with recorded kernel peaks is
// planned and run by them, and its compiles are told where the gate and the peaks are.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "../support/fake_supervisor.h"
#include "app/cell_run.h"
#include "app/remote_cache.h"
#include "app/site_build.h"
#include "costs/row_costs.h"
#include "costs/unit_peaks.h"
#include "plan_fixture.h"
#include "util/files.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RowCosts record_of(std::initializer_list<double> peaks_mb) {
  RowCosts costs;
  int i = 0;
  for (double mb : peaks_mb) costs.units["csrc/k" + std::to_string(i++) + ".cu"] = UnitCost{60, 60, mb};
  costs.units["csrc/api.cpp"] = UnitCost{30, 30, 1600};  // not a kernel: not in the kernels' figures
  return costs;
}

TEST(RecordedPeaks, KernelPeaksAreTheRecordedKernelsOnly) {
  EXPECT_FALSE(kernel_peaks(RowCosts{}, 1));
  const auto p = kernel_peaks(record_of({3000, 6000, 4500, 5000}), 1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->count, 4U);
  EXPECT_DOUBLE_EQ(p->smallest_mb, 3000);
  EXPECT_DOUBLE_EQ(p->median_mb, 4750);
  EXPECT_DOUBLE_EQ(p->largest_mb, 6000);
  EXPECT_DOUBLE_EQ(kernel_peaks(record_of({3000, 6000}), 2)->smallest_mb, 6000);  // two stages at once
}

TEST(RecordedPeaks, TheGrantIsTheMemorySharedByTheMostCompilesThatCouldRunAtOnce) {
  const KernelPeaks peaks{3072, 4608, 7168, 72};
  Budget runner;  // a hosted runner: 4 cores, 11 GB after the reserve
  runner.cores = 4;
  runner.memory_gb = 11;
  JobSettings shape;
  shape.nvcc_threads = 1;
  gate_by_recorded_peaks(shape, peaks, runner);
  EXPECT_TRUE(shape.memory_gate);
  // 11 GB holds 3 of the smallest kernel (3 GB), fewer than the 4 cores: 3 jobs share it all.
  EXPECT_DOUBLE_EQ(shape.gb_per_job, 11.0 / 3);
  ASSERT_EQ(shape.notes.size(), 1U);
  EXPECT_THAT(shape.notes[0], HasSubstr("72 kernels of 3.0-7.0 GB"));
  Budget box;  // the GPU machine: 16 cores, 106 GB
  box.cores = 16;
  box.memory_gb = 106;
  JobSettings big;
  big.nvcc_threads = 2;
  gate_by_recorded_peaks(big, peaks, box);
  EXPECT_DOUBLE_EQ(big.gb_per_job, 106.0 / 8);  // 8 slots of 2 threads share the memory
}

TEST(RecordedPeaks, EveryRecordedUnitByItsPathAndTheLargestForTheRest) {
  const auto peaks = unit_peaks_for(record_of({3000.2, 6000}), "/w/.staging/c/src", 1);
  EXPECT_EQ(peaks.of("/w/.staging/c/src/csrc/k0.cu"), 3001U);
  EXPECT_EQ(peaks.of("/w/.staging/c/src/csrc/api.cpp"), 1600U);
  EXPECT_EQ(peaks.of("/w/.staging/c/src/csrc/new.cu"), 6000U);
  EXPECT_EQ(peaks.seconds_of("/w/.staging/c/src/csrc/k0.cu"), 60U);  // the gate's priority: its CPU seconds
  const auto at_two = unit_peaks_for(record_of({3000, 6000}), "/w/.staging/c/src", 2);
  EXPECT_EQ(at_two.of("/w/.staging/c/src/csrc/k0.cu"), 6000U);
  EXPECT_EQ(at_two.of("/w/.staging/c/src/csrc/api.cpp"), 1600U);  // one compiler, whatever NVCC_THREADS says
  EXPECT_EQ(at_two.of("/w/.staging/c/src/csrc/new.cu"), 12000U);
}

// A row with a record: the plan gates its cells, the run tells their compiles the grant, the
// gate's directory and the peaks file; a row without one is planned as before.
TEST_F(AppPlan, ARowWithRecordedPeaksIsPlannedAndRunByThem) {
  write_matrix("python: [cp312]\n");
  Plan p = plan();
  ASSERT_EQ(p.cells.size(), 1U);
  EXPECT_FALSE(p.cells[0].jobs.memory_gate);
  const int ungated_jobs = p.cells[0].jobs.max_jobs;
  RealFiles files;
  save_row_costs(files, row_costs_path(p.cache_root, remote_row_key(p.cells[0].cell)),
                 record_of({3000, 3500, 4000, 6000}));

  p = plan();
  const PlannedCell& c = p.cells[0];
  ASSERT_TRUE(c.jobs.memory_gate);
  // 8 cores of 2 nvcc threads: 4 slots of 27.2 GB / 4 = 6.8 GB, more than the smallest kernel.
  EXPECT_DOUBLE_EQ(c.jobs.gb_per_job, p.budget.memory_gb / 4);
  EXPECT_EQ(c.jobs.max_jobs, 4);
  EXPECT_GT(c.jobs.max_jobs, ungated_jobs);
  EXPECT_THAT(c.jobs.notes.back(), HasSubstr("memory by recorded peaks: 4 kernels"));

  std::vector<std::size_t> all = {0};
  SiteBuild b = plan_site_build(p, all, false, system_);
  ASSERT_EQ(b.cells.size(), 1U);
  EXPECT_TRUE(b.cells[0].memory_gate);
  const auto build =
      std::find_if(b.cells[0].steps.begin(), b.cells[0].steps.end(), [](const Step& s) { return s.name == "build"; });
  ASSERT_NE(build, b.cells[0].steps.end());
  std::map<std::string, std::string> env(build->env.begin(), build->env.end());
  EXPECT_EQ(env["FABUILD_CC_GATE"], b.cells[0].staging_dir + "/.objcache.gate");
  EXPECT_EQ(env["FABUILD_CC_PEAKS"], b.cells[0].staging_dir + "/.objcache.peaks");

  // The runner sets the grant and the slots beside MAX_JOBS, a window kGateWindow times wider.
  CellRun run = base_cell_run(c, (root_ / "wheelhouse").string());
  run.steps = {Step{"compile", {"compile", "{memory_mb}"}, {}, {}, {}}};
  run.steps[0].templated = true;  // {memory_mb}: what a container's cap is made of
  test::FakeSupervisor sup;
  std::ostringstream printed;
  const auto status = make_status_printer(printed, false);
  RunSettings settings;
  settings.tick = std::chrono::milliseconds(0);
  std::vector<CellRun> runs = {std::move(run)};
  ASSERT_EQ(run_cells(runs, p.budget, settings, sup, files, *status).exit_code(), 0) << printed.str();
  ASSERT_EQ(sup.specs.size(), 1U);
  const auto& spec = sup.specs.begin()->second;
  EXPECT_EQ(test::env_value(spec, "MAX_JOBS"), std::to_string(4 * kGateWindow));
  EXPECT_EQ(test::env_value(spec, "FABUILD_CC_SLOTS"), "4");
  const double grant_mb = std::ceil(4 * c.jobs.gb_per_job * 1024);
  EXPECT_EQ(test::env_value(spec, "FABUILD_CC_MEMORY_MB"), fmt::format("{:.0f}", grant_mb));
  // The cell's own processes beside its compiles: the cap is the grant and kGateOverheadMb.
  ASSERT_EQ(spec.argv.size(), 2U);
  EXPECT_EQ(spec.argv[1], fmt::format("{:.0f}", grant_mb + kGateOverheadMb));

  // build.max_jobs is the matrix's own word: no gate.
  write_matrix("python: [cp312]\nbuild: {max_jobs: 2}\n");
  EXPECT_FALSE(plan().cells[0].jobs.memory_gate);
}

// A new torch series's row, not yet built, is planned by the record of the same kernels for the
// nearest older series (costs/borrowed.h); once it has a record of its own, by that.
TEST_F(AppPlan, ARowNotYetBuiltIsPlannedByItsNearestTorchSiblingsRecord) {
  write_matrix("python: [cp312]\n", "[\"2.8.3\"]", "[\"2.11\", \"2.12\", \"2.13\"]");
  Plan p = plan();
  ASSERT_EQ(p.cells.size(), 3U);
  for (const auto& c : p.cells) EXPECT_FALSE(c.jobs.memory_gate) << c.id;
  RealFiles files;
  const auto save = [&](const Cell& cell, const RowCosts& record) {
    save_row_costs(files, row_costs_path(p.cache_root, remote_row_key(cell)), record);
  };
  save(p.cells[0].cell, record_of({9000, 9000}));              // 2.11
  save(p.cells[1].cell, record_of({3000, 3500, 4000, 6000}));  // 2.12

  Options only_new;
  only_new.filters.axes[Axis::kTorch] = {"2.13"};
  p = plan(only_new);
  ASSERT_EQ(p.cells.size(), 1U);
  const PlannedCell& c = p.cells[0];
  ASSERT_TRUE(c.jobs.memory_gate);
  EXPECT_EQ(c.jobs.max_jobs, 4);  // 2.12's kernels, not 2.11's
  EXPECT_THAT(c.jobs.notes.back(), HasSubstr("memory by recorded peaks: 4 kernels"));
  EXPECT_THAT(c.jobs.notes.back(), HasSubstr("torch 2.12's record of the same kernels: this row has none yet"));
  ASSERT_EQ(p.borrowed.count(remote_row_key(c.cell)), 1U);
  EXPECT_EQ(p.borrowed.at(remote_row_key(c.cell)).torch.str(), "2.12");

  // Its own record, once it has one, is what it plans by.
  save(c.cell, record_of({9000, 9000}));
  p = plan(only_new);
  EXPECT_TRUE(p.borrowed.empty());
  EXPECT_EQ(p.cells[0].jobs.max_jobs, 1);  // two 17.6 GB kernels (two nvcc threads) in 27.2 GB
  EXPECT_THAT(p.cells[0].jobs.notes.back(), Not(HasSubstr("torch 2.12's record")));
}

}  // namespace
}  // namespace fabuild
