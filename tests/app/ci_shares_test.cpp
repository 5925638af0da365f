// Rows over the cap in compile shares (costs/ci_estimate.h): how many, the jobs --ci-matrix lays
// out for them, and row times from recorded unit costs instead of the guess.

#include "costs/ci_estimate.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "app/ci_matrix.h"
#include "app/ci_providers.h"
#include "app/remote_cache.h"
#include "costs/unit_peaks.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "matrix/select.h"

namespace fabuild {
namespace {

// Two rows of four Python tags: cu126 at one arch, cu128 at four; setup 15 min, 2 h an arch.
MatrixSpec spec_with(const std::string& ci) {
  return parse_matrix(
      "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.6\", \"12.8\"]\npython: [cp310, cp311, cp312, cp313]\n"
      "archs: {default: \"80\", \"12.8\": \"80;90;100;120\"}\ntorch_index: https://torch-index.invalid/whl\n"
      "build: {nvcc_threads: 2}\nci: {setup_time: 15m, time_per_arch: 2h" +
          ci + "}\n",
      "m.yaml");
}

CiCosts with_remote() {
  CiCosts c;
  c.remote = true;
  return c;
}

std::vector<const CiJob*> stage(const CiMatrix& m, const std::string& name) {
  std::vector<const CiJob*> out;
  for (const auto& j : m.jobs) {
    if (j.stage == name) out.push_back(&j);
  }
  return out;
}

TEST(CiShares, WithoutARemoteARowOverTheCapStaysOneJobAndIsWarnedAbout) {
  const MatrixSpec spec = spec_with("");
  const CiMatrix m = plan_ci_jobs(expand(spec).cells, spec.ci, Filters{});
  EXPECT_TRUE(stage(m, "compile").empty());
  ASSERT_EQ(m.warnings.size(), 1U);
  EXPECT_NE(m.warnings[0].find("cu128"), std::string::npos) << m.warnings[0];
}

TEST(CiShares, ARowOverTheCapIsCompiledInSharesAndEveryJobFits) {
  const MatrixSpec spec = spec_with(", max_parallel: 1");  // more shares would only add their setup
  const CiMatrix m = plan_ci_jobs(expand(spec).cells, spec.ci, Filters{}, Rows::kKeep, with_remote());
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  // cu128: 8 h a first cell, 7.52 h of it kernels; a share gets 0.8 x 6 h - 15 min = 4.55 h:
  // two shares, and on one runner a third would only add its setup.
  const auto compile = stage(m, "compile");
  ASSERT_EQ(compile.size(), 2U);
  const auto build = stage(m, "build");
  ASSERT_EQ(build.size(), 2U);
  EXPECT_EQ(m.jobs.front().stage, "compile");  // listed first: the finishing jobs need them
  for (const CiJob* j : compile) {
    EXPECT_LE(j->timeout_minutes, 360);
    EXPECT_EQ(j->shares, 2);
    EXPECT_EQ(j->cells, 1U);
    ASSERT_GE(j->args.size(), 6U);
    EXPECT_EQ(j->args[j->args.size() - 4], "--compile-share");
    // No record of the row on the remote: every share splits by the guess, re-runs too.
    EXPECT_EQ(j->args[j->args.size() - 2], "--share-costs");
    EXPECT_EQ(j->args.back(), "none");
    EXPECT_NE(j->name.find("cu128"), std::string::npos);
  }
  EXPECT_EQ(compile[0]->args[compile[0]->args.size() - 3], "1/2");
  EXPECT_EQ(compile[1]->args[compile[1]->args.size() - 3], "2/2");
  for (const CiJob* j : build) {
    EXPECT_EQ(j->shares, j->name.find("cu128") != std::string::npos ? 2 : 0) << j->name;
    EXPECT_EQ(j->cells, 4U);
    // The finishing job: setup and four all-hit cells, 15 + 4 x 0.06 x 480 = 130.2 min.
    if (j->shares > 0) {
      EXPECT_EQ(j->timeout_minutes, 131);
    }
  }
  const auto json = github_matrix_json(m);
  EXPECT_EQ(json["include"][0]["stage"], "compile");
  EXPECT_EQ(json["include"][0]["shares"], 2);
  EXPECT_EQ(json["include"][2]["stage"], "build");
}

// With runners to spare, a row gets more shares than the cap needs when the graph ends sooner
// for it, within a tenth more runner time.
TEST(CiShares, SpareRunnersGetMoreSharesWhenTheGraphEndsSooner) {
  const MatrixSpec one = spec_with(", max_parallel: 1");
  const MatrixSpec twenty = spec_with(", max_parallel: 20");
  const CiMatrix least = plan_ci_jobs(expand(one).cells, one.ci, Filters{}, Rows::kKeep, with_remote());
  const CiMatrix more = plan_ci_jobs(expand(twenty).cells, twenty.ci, Filters{}, Rows::kKeep, with_remote());
  ASSERT_EQ(stage(least, "compile").size(), 2U);
  EXPECT_GT(stage(more, "compile").size(), 2U);
  EXPECT_LE(more.runner_seconds, 1.1 * least.runner_seconds);
  // The same rows on 20 runners: the two-share layout would end later.
  std::vector<RowPlan> rows;
  for (const auto& row : rows_of(expand(twenty).cells)) {
    std::vector<Cell> cells;
    for (std::size_t i : row) cells.push_back(expand(twenty).cells[i]);
    const RowTime t = row_time(cells, twenty.ci, with_remote());
    rows.push_back(RowPlan{t, cells.size(), compile_shares_for(cells, t, twenty.ci, with_remote())});
  }
  EXPECT_LT(more.graph_seconds, 0.97 * graph_seconds(rows, 20));
}

// Four like rows of two shares on seven runners: every row at five shares (20 jobs, three
// waves) ends at 7.4 h; two rows at four and two at three (14 jobs, two waves) at 6.98 h.
TEST(CiShares, ExtraSharesMayDifferByRowToFillTheLastWave) {
  CiSpec ci;
  ci.max_parallel = 7;
  RowTime t;
  t.first_s = 10.4 * 3600;
  t.kernel_s = 10 * 3600;
  t.tag_s = 0.1 * 3600;
  t.setup_s = 0.25 * 3600;
  t.recorded = true;
  std::vector<RowPlan> rows(4, RowPlan{t, 4, 2});
  balance_shares(rows, ci);
  std::vector<int> shares;
  for (const RowPlan& r : rows) shares.push_back(r.shares);
  std::sort(shares.begin(), shares.end());
  EXPECT_EQ(shares, (std::vector<int>{3, 3, 4, 4}));
  EXPECT_NEAR(graph_seconds(rows, 7) / 3600, 6.983, 0.01);
  std::vector<RowPlan> uniform(4, RowPlan{t, 4, 5});
  EXPECT_NEAR(graph_seconds(uniform, 7) / 3600, 7.4, 0.01);
}

TEST(CiShares, CompileSharesSetInTheMatrixSplitEveryRowOrNone) {
  const MatrixSpec four = spec_with(", compile_shares: 4");
  const CiMatrix m = plan_ci_jobs(expand(four).cells, four.ci, Filters{}, Rows::kKeep, with_remote());
  EXPECT_EQ(stage(m, "compile").size(), 8U);
  const MatrixSpec never = spec_with(", compile_shares: 1");
  const CiMatrix n = plan_ci_jobs(expand(never).cells, never.ci, Filters{}, Rows::kKeep, with_remote());
  EXPECT_TRUE(stage(n, "compile").empty());
  EXPECT_EQ(n.warnings.size(), 1U);
}

TEST(CiShares, RecordedUnitCostsTimeTheRowInsteadOfTheGuess) {
  const MatrixSpec spec = spec_with(", max_parallel: 1");
  const auto cells = expand(spec).cells;
  CiCosts costs = with_remote();
  // The cu128 row measured: 72 kernels of 1 000 CPU seconds, 3 GB each: 4 cores at once
  // (2 units of 2 threads), 18 000 s of kernels, 5.3 h a first cell: one job of 5.9 h is over
  // 0.8 of the cap, so two shares.
  RowCosts record;
  for (int i = 0; i < 72; ++i) record.units["csrc/k" + std::to_string(i) + ".cu"] = UnitCost{500, 1000, 3072};
  const Cell* cu128 = nullptr;
  for (const auto& c : cells) {
    if (c.id().find("cu128") != std::string::npos) cu128 = &c;
  }
  ASSERT_NE(cu128, nullptr);
  costs.rows[remote_row_key(*cu128)] = record;
  costs.digests[remote_row_key(*cu128)] = "ab12";
  const CiMatrix m = plan_ci_jobs(cells, spec.ci, Filters{}, Rows::kKeep, costs);
  EXPECT_EQ(m.jobs.front().args.back(), "ab12");  // its shares split by the record the plan saw
  EXPECT_EQ(m.recorded_rows, 1U);
  EXPECT_EQ(m.timed_rows, 2U);
  const RowTime t = row_time({*cu128}, spec.ci, costs);
  EXPECT_TRUE(t.recorded);
  EXPECT_TRUE(t.gated);  // its cells go through the memory gate: timed as the gate starts them
  EXPECT_EQ(m.gated_rows, 1U);
  // 6 GB a kernel at two threads in the runner's 12 GB (16 less the 4 GB reserve): 2 at once.
  EXPECT_DOUBLE_EQ(t.kernel_s, 18000);
  ASSERT_EQ(stage(m, "compile").size(), 2U);
  // Each share: 36 kernels two at a time, 150 min, and the setup; its timeout twice that
  // (a record's estimate; kRecordedTimeoutMargin).
  EXPECT_DOUBLE_EQ(stage(m, "compile")[0]->expected_s, (15 + 150) * 60);
  EXPECT_EQ(stage(m, "compile")[0]->timeout_minutes, 330);
  // A unit that needs 9 GB (18 at two threads) runs alone, the others two at a time after it.
  record.units["csrc/k0.cu"].peak_mb = 9 * 1024;
  costs.rows[remote_row_key(*cu128)] = record;
  EXPECT_DOUBLE_EQ(row_time({*cu128}, spec.ci, costs).kernel_s, 500 + 36 * 500);
  // Without the gate (build.max_jobs is the matrix's word) slots are sized by the largest: one
  // at a time, half the cores.
  const MatrixSpec fixed = parse_matrix(
      "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp310]\narchs: \"80;90;100;120\"\n"
      "torch_index: https://torch-index.invalid/whl\nbuild: {nvcc_threads: 2, max_jobs: 2}\n",
      "m.yaml");
  const Cell only = expand(fixed).cells.front();
  costs.rows[remote_row_key(only)] = record;
  const RowTime f = row_time({only}, fixed.ci, costs);
  EXPECT_FALSE(f.gated);
  EXPECT_DOUBLE_EQ(f.kernel_s, 36000);
}

// A row whose jobs recorded their setup is timed by it, not by ci.setup_time: its jobs' timeouts
// and its shares follow, and the plan counts it.
TEST(CiShares, ARowsRecordedSetupTimesItsJobs) {
  const MatrixSpec spec = spec_with(", max_parallel: 1");
  const auto cells = expand(spec).cells;
  const auto cu128 =
      std::find_if(cells.begin(), cells.end(), [](const Cell& c) { return c.id().find("cu128") != std::string::npos; });
  ASSERT_NE(cu128, cells.end());
  CiCosts costs = with_remote();
  const CiMatrix guessed = plan_ci_jobs(cells, spec.ci, Filters{}, Rows::kKeep, costs);
  EXPECT_EQ(guessed.setup_rows, 0U);
  RowCosts record;
  record.add_setup(SetupTime{40 * 60, "2026-11-26T03:00:00Z on runner-1"});
  record.add_setup(SetupTime{55 * 60, "2026-11-27T03:00:00Z on runner-2"});
  costs.rows[remote_row_key(*cu128)] = record;
  const RowTime t = row_time({*cu128}, spec.ci, costs);
  EXPECT_TRUE(t.setup_recorded);
  EXPECT_FALSE(t.recorded);  // no unit measured: its compiles are still guessed
  EXPECT_DOUBLE_EQ(t.setup_s, 55 * 60);
  const CiMatrix m = plan_ci_jobs(cells, spec.ci, Filters{}, Rows::kKeep, costs);
  EXPECT_EQ(m.setup_rows, 1U);
  EXPECT_DOUBLE_EQ(m.longest_setup_s, 55 * 60);
  // Each of its two share jobs: its longest recorded setup and half the kernels (7.5 h), 40 min
  // more than with the matrix's 15; so is its finishing job.
  ASSERT_EQ(stage(guessed, "compile").size(), 2U);
  ASSERT_EQ(stage(m, "compile").size(), 2U);
  EXPECT_EQ(stage(m, "compile").front()->timeout_minutes, stage(guessed, "compile").front()->timeout_minutes + 40);
  EXPECT_EQ(stage(m, "build").back()->timeout_minutes, stage(guessed, "build").back()->timeout_minutes + 40);
  // The cu126 row has no record: the matrix's 15 minutes.
  EXPECT_DOUBLE_EQ(row_time({cells.front()}, spec.ci, costs).setup_s, 15 * 60);
}

// The gate's schedule of a recorded row (costs/unit_peaks.h), as the CI estimate uses it: the
// longest first among what ninja handed out, the others beside it as the memory allows.
TEST(CiShares, TheGatedEstimateStartsTheLongestFirstAndPacksByPeak) {
  RowCosts record;
  record.units["csrc/a.cu"] = UnitCost{10, 10, 4000};
  record.units["csrc/b.cu"] = UnitCost{100, 100, 4000};
  record.units["csrc/c.cu"] = UnitCost{10, 10, 4000};
  record.units["csrc/d.cu"] = UnitCost{10, 10, 4000};
  // 4 cores, 13 GB: 3 of 4000 MB at once; b (100 s) from the start, a and c beside it, d after.
  EXPECT_DOUBLE_EQ(*gated_kernel_seconds(record, 1, 4, 13), 100);
  // 8 GB: 2 at once: b, then a, c, d one after another beside it.
  EXPECT_DOUBLE_EQ(*gated_kernel_seconds(record, 1, 4, 8), 100);
  // 4 GB: one at a time.
  EXPECT_DOUBLE_EQ(*gated_kernel_seconds(record, 1, 4, 4), 130);
  // Two threads: each kernel holds 8000 MB and takes half its CPU seconds.
  EXPECT_DOUBLE_EQ(*gated_kernel_seconds(record, 2, 4, 16), 50);
  EXPECT_FALSE(gated_kernel_seconds(RowCosts{}, 1, 4, 13));
}

// A gated row's shares are timed as each one's own gate runs its units, not as an even part of
// the row: a share of few units cannot fill the runner's slots the way the whole row does (the
// real FlashAttention 2.8.3 row's shares ran their last compiles alone; docs/performance.md).
TEST(CiShares, EachGatedShareIsTimedByItsOwnUnits) {
  const MatrixSpec spec = spec_with("");
  CiCosts costs = with_remote();
  Cell cu128;
  for (const auto& c : expand(spec).cells) {
    if (c.id().find("cu128") != std::string::npos) cu128 = c;
  }
  // Eight kernels of 100 s at the row's two nvcc threads, 3 GB each: two at a time by the cores.
  RowCosts record;
  for (int i = 0; i < 8; ++i) record.units["csrc/k" + std::to_string(i) + ".cu"] = UnitCost{200, 200, 1536};
  costs.rows[remote_row_key(cu128)] = record;
  const RowTime t = row_time({cu128}, spec.ci, costs);
  ASSERT_TRUE(t.gated);
  EXPECT_DOUBLE_EQ(t.kernel_s, 400);
  // In three shares of 3, 3 and 2 kernels: 200, 200 and 100 s after the 15 min setup, where an
  // even part of the row would say 133 s.
  EXPECT_EQ(share_jobs_seconds(t, 3), (std::vector<double>{1100, 1100, 1000}));
  EXPECT_DOUBLE_EQ(share_job_seconds(t, 3), 1100);
  // A record that lists the build's kernels, two it has no cost for: those take the recorded
  // mean (100 s), wait for the largest recorded peak and start last, in the row and in its shares.
  record.built = {"csrc/k0.cu", "csrc/k1.cu", "csrc/k2.cu", "csrc/k3.cu",   "csrc/k4.cu",
                  "csrc/k5.cu", "csrc/k6.cu", "csrc/k7.cu", "csrc/new1.cu", "csrc/new2.cu"};
  costs.rows[remote_row_key(cu128)] = record;
  const RowTime listed = row_time({cu128}, spec.ci, costs);
  EXPECT_DOUBLE_EQ(listed.kernel_s, 500);
  EXPECT_EQ(share_jobs_seconds(listed, 5), std::vector<double>(5, 1000));
  // Without a record the shares stay an even part of the guess.
  const RowTime guessed = row_time({cu128}, spec.ci, with_remote());
  EXPECT_FALSE(guessed.gate);
  EXPECT_EQ(share_jobs_seconds(guessed, 2), std::vector<double>(2, guessed.setup_s + guessed.kernel_s / 2));
}

// FlashAttention 2.8.3's units as measured on the GPU machine (bench/data, one arch), as a
// four-arch row would record them: four times the CPU, one stage's peak.
RowCosts measured_fa2_row() {
  std::ifstream in(std::string(FABUILD_SOURCE_DIR) + "/bench/data/fa2.8.3-sm90-units-h100.tsv");
  RowCosts record;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.starts_with("unit\t")) continue;
    std::istringstream fields(line);
    std::string unit;
    double wall = 0, cpu = 0, user = 0, sys = 0, peak = 0;
    fields >> unit >> wall >> cpu >> user >> sys >> peak;
    const double archs = unit.ends_with(".cu") ? 4 : 1;
    record.units["csrc/flash_attn/src/" + unit] = UnitCost{archs * wall, archs * cpu, peak};
  }
  return record;
}

// The shipped publish matrix with every row recorded: fabuild times each row as the memory gate
// would compile it on a runner (15 GB less the 2 GB reserve) and no job goes over the cap; what
// bench/release_sim.py replays (docs/performance.md, "The memory gate").
TEST(CiShares, ThePublishMatrixWithMeasuredRecordsIsTimedByTheGate) {
  MatrixSpec spec = load_matrix(FABUILD_SOURCE_DIR "/matrix/publish-shaped.yaml");
  spec.torch_index = "https://torch-index.invalid/whl";  // a PyTorch-style index: every torch CUDA build
  const auto cells = expand(spec).cells;
  ASSERT_EQ(cells.size(), 56U);
  CiCosts costs = with_remote();
  const RowCosts record = measured_fa2_row();
  ASSERT_EQ(record.units.size(), 73U);
  for (const auto& c : cells) costs.rows[remote_row_key(c)] = record;
  const CiMatrix m = plan_ci_jobs(cells, spec.ci, Filters{}, Rows::kKeep, costs);
  EXPECT_EQ(m.gated_rows, 14U);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  const RowTime t = row_time({cells.front()}, spec.ci, costs);
  // The simulator's C at 13 GB in setup.py's order is 381 min; the record's order is by name.
  EXPECT_NEAR(t.kernel_s / 60, 381, 30);
  for (const CiJob& j : m.jobs) EXPECT_LE(j.timeout_minutes, 360) << j.name;
  std::map<int, int> shares;
  for (const CiJob* j : stage(m, "build")) ++shares[j->shares];
  for (const auto& [k, n] : shares) std::printf("%d rows in %d shares\n", n, k);
  std::printf("row kernels %.0f min; graph %.2f h on %d runners\n", t.kernel_s / 60, m.graph_seconds / 3600,
              spec.ci.max_parallel);
  // Ten rows at 2 shares make a first wave of 20 long jobs on the 20 runners; four at 5, a
  // second of 20 short ones: 6.1 h (each share timed as the gate runs its own units, its last
  // compiles alone: 5.9 h when a share was an even part of the row), where one share at a time
  // (10 at 2, 4 at 3: 32 jobs that fill no wave) ended at 6.7 h. bench/release_sim.py keeps the
  // same counts.
  EXPECT_EQ(shares, (std::map<int, int>{{2, 10}, {5, 4}}));
  EXPECT_LT(m.graph_seconds / 3600, 6.2);
}

// The real gated FlashAttention 2.8.3 row (docs/performance.md, "A gated row, with its finishing
// job"): planned from the record its shares split and gated by, with the kernels the build
// compiles, fabuild's expected times stand within 15 % of the job graph's measured end, each
// share within its measured wall's 0.85-1.25, and every job's timeout above what it took.
TEST(CiShares, TheRealGatedRowsPlanMeetsItsMeasuredJobs) {
  const MatrixSpec spec = parse_matrix(
      "versions: [\"2.8.3\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\npython: [cp312]\narchs: \"90\"\n"
      "torch_index: https://torch-index.invalid/whl\nci: {compile_shares: 8}\n",
      "m.yaml");
  const auto cells = expand(spec).cells;
  ASSERT_EQ(cells.size(), 1U);
  std::ifstream in(std::string(FABUILD_SOURCE_DIR) + "/bench/data/fa2.8.3-row-h200x2-record-built.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto record = row_costs_from_json(text);
  ASSERT_TRUE(record);
  ASSERT_EQ(record->built.size(), 72U);
  CiCosts costs = with_remote();
  costs.rows[remote_row_key(cells.front())] = *record;
  costs.digests[remote_row_key(cells.front())] = "seed";
  const CiMatrix m = plan_ci_jobs(cells, spec.ci, Filters{}, Rows::kKeep, costs);
  std::map<std::string, double> measured;  // share ("1".."8", "finish") -> wall seconds
  std::ifstream jobs(std::string(FABUILD_SOURCE_DIR) + "/bench/data/fa2.8.3-row-gated-h200x2-jobs.tsv");
  for (std::string line; std::getline(jobs, line);) {
    if (line.empty() || line[0] == '#' || line.starts_with("share\t")) continue;
    std::istringstream fields(line);
    std::string share, exit_code;
    double wall = 0;
    fields >> share >> exit_code >> wall;
    measured[share] = wall;
  }
  ASSERT_EQ(measured.size(), 9U);
  double planned_stage = 0, measured_stage = 0;
  for (const CiJob* j : stage(m, "compile")) {
    const std::string k = j->name.substr(j->name.rfind(' ') + 1, 1);
    ASSERT_EQ(measured.count(k), 1U) << j->name;
    EXPECT_GT(j->expected_s, 0.85 * measured[k]) << j->name;
    EXPECT_LT(j->expected_s, 1.25 * measured[k]) << j->name;
    EXPECT_GT(j->timeout_minutes * 60, measured[k]) << j->name;
    planned_stage = std::max(planned_stage, j->expected_s);
    measured_stage = std::max(measured_stage, measured[k]);
  }
  ASSERT_EQ(stage(m, "build").size(), 1U);
  const CiJob& finishing = *stage(m, "build").front();
  EXPECT_GT(finishing.timeout_minutes * 60, measured["finish"]);
  const double planned = planned_stage + finishing.expected_s, took = measured_stage + measured["finish"];
  std::printf("the job graph: planned %.0f s, measured %.0f s\n", planned, took);
  EXPECT_NEAR(planned / took, 1.0, 0.15);
}

}  // namespace
}  // namespace fabuild
