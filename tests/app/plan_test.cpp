// make_plan and plan_site_build against a fake System (tests/support/fake_system.h): what the
// plan takes from the machine, where it finds toolchain files, which site each cell gets and
// what its run looks like, with no process started and nothing asked of this machine.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../support/fake_supervisor.h"
#include "../support/fake_system.h"
#include "../support/scratch_dir.h"
#include "app/cell_run.h"
#include "app/object_cache.h"
#include "app/plan.h"
#include "app/site_build.h"
#include "plan_fixture.h"
#include "wheel/manifest.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST_F(AppPlan, AMatrixThatNamesNoPlatformBuildsForTheMachines) {
  write_matrix("python: [cp312]\n");
  system_.platform = "win_amd64";
  Plan p = plan();
  ASSERT_EQ(p.cells.size(), 1u);
  EXPECT_EQ(p.cells.at(0).cell.platform, Platform::kWinAmd64);
  EXPECT_THAT(p.cells.at(0).id, HasSubstr("win_amd64"));

  write_matrix("python: [cp312]\nplatform: [linux_x86_64]\n");  // named: kept, whatever the host
  p = plan();
  ASSERT_EQ(p.cells.size(), 1u);
  EXPECT_EQ(p.cells.at(0).cell.platform, Platform::kLinuxX86_64);

  write_matrix("python: [cp312]\n");
  system_.platform = "macosx_14_0_arm64";  // a host fabuild builds nothing for: the default stays
  p = plan();
  ASSERT_EQ(p.cells.size(), 1u);
  EXPECT_EQ(p.cells.at(0).cell.platform, Platform::kLinuxX86_64);
}

TEST_F(AppPlan, TakesTheBudgetAndCacheFromTheSystem) {
  write_matrix("python: [cp311, cp312]\n");
  const Plan p = plan();
  EXPECT_EQ(p.cells.size(), 2u);
  EXPECT_EQ(p.cache_root, root_ / "cache");
  EXPECT_EQ(p.cache.dir, (root_ / "cache" / "objects").string());
  EXPECT_LE(p.budget.cores, 8);
  EXPECT_LE(p.budget.memory_gb, 32);
  for (const PlannedCell& c : p.cells) {
    EXPECT_GE(c.jobs.max_jobs, 1);
    EXPECT_LE(c.jobs.max_jobs * c.jobs.nvcc_threads, 8) << c.id;  // the forecast fits the fake machine
  }
  // A bigger machine, the same matrix: more jobs for the same cells.
  system_.machine = [] {
    Resources r;
    r.cores = 64;
    r.memory_gb = 512;
    return r;
  };
  EXPECT_GT(plan().cells.at(0).jobs.max_jobs, p.cells.at(0).jobs.max_jobs);
}

TEST_F(AppPlan, FindsToolchainsFromTheMatrixFileNotTheWorkingDirectory) {
  write_matrix("python: [cp312]\n");
  const fs::path elsewhere = root_ / "elsewhere";
  fs::create_directories(elsewhere / "toolchains");
  const fs::path cwd = fs::current_path();
  fs::current_path(elsewhere);
  const Plan p = plan();
  fs::current_path(cwd);
  EXPECT_EQ(p.toolchains_dir, root_ / "project" / "toolchains");
  EXPECT_EQ(host_toolchains_file(p), (root_ / "project" / "toolchains" / "host.yaml").string());

  system_.env.set("FABUILD_TOOLCHAINS", (elsewhere / "toolchains").string());
  EXPECT_EQ(plan().toolchains_dir, elsewhere / "toolchains");
}

TEST_F(AppPlan, AHostCellBuildsWithTheToolkitAndPythonItsToolchainsName) {
  write_matrix("python: [cp312]\n");
  const Plan p = plan();
  const SiteBuild b = plan_site_build(p, {0}, false, system_);
  ASSERT_TRUE(b.settled.empty()) << b.settled.at(0).step << ": " << b.settled.at(0).message;
  ASSERT_EQ(b.cells.size(), 1u);
  const CellRun& run = b.cells.at(0);
  std::map<std::string, std::string> env(run.env.begin(), run.env.end());
  EXPECT_EQ(env["CUDA_HOME"], cuda_.string());
  EXPECT_THAT(env["PATH"], StartsWith((cuda_ / "bin").string() + ":"));
  // MAX_JOBS and NVCC_THREADS are the runner's, from the live grant: never in the cell's env.
  EXPECT_EQ(env.count("MAX_JOBS"), 0u);
  EXPECT_EQ(env.count("NVCC_THREADS"), 0u);
  std::vector<std::string> steps;
  for (const Step& s : run.steps) steps.push_back(s.name);
  EXPECT_THAT(steps, ::testing::IsSupersetOf({"check", "build", "verify", "file"}));
  EXPECT_LT(std::find(steps.begin(), steps.end(), "check"), std::find(steps.begin(), steps.end(), "build"));
  EXPECT_LT(std::find(steps.begin(), steps.end(), "build"), std::find(steps.begin(), steps.end(), "file"));
  // Its Python environment is made first, once, from the interpreter the toolchains named.
  ASSERT_EQ(b.environments.size(), 1u);
  EXPECT_THAT(b.needs.at(0), ElementsAre(0u));
  EXPECT_EQ(b.environments.at(0).kind, RunKind::kEnvironment);
  bool asked_python = false;
  for (const auto& argv : runner_->asked) asked_python |= argv.at(0) == python_.string();
  EXPECT_TRUE(asked_python);
}

TEST_F(AppPlan, EachRowsFirstCellCompilesBeforeTheOtherTagsOfItsRow) {
  write_matrix("python: [cp311, cp312]\n", "[\"2.8.3\", \"2.8.2\"]");
  const Plan p = plan();
  ASSERT_EQ(p.cells.size(), 4u);
  std::vector<std::size_t> all = {0, 1, 2, 3};
  SiteBuild b = plan_site_build(p, all, false, system_);
  ASSERT_TRUE(b.object_cache);
  std::vector<const Cell*> cells;
  std::vector<std::string> rows;
  for (std::size_t i : b.cell_index) {
    cells.push_back(&p.cells[i].cell);
    rows.push_back(p.cells[i].row);
  }
  first_of_each_row_first(b.cells, rows);
  std::map<std::string, std::size_t> first_of_row;  // version -> index in b.cells of its first cell
  for (std::size_t k = 0; k < b.cells.size(); ++k) {
    const std::string version = cells[k]->version.str();
    if (!first_of_row.count(version)) {
      first_of_row[version] = k;
      EXPECT_FALSE(b.cells[k].demand.after.has_value()) << b.cells[k].id;
    } else {
      EXPECT_EQ(b.cells[k].demand.after, first_of_row[version]) << b.cells[k].id;
    }
  }
  EXPECT_EQ(first_of_row.size(), 2u);
}

// The plan's MAX_JOBS and NVCC_THREADS are the run's: a row of four Python tags, forecast by
// make_plan (--dry-run prints it) and run by the engine, on a fake supervisor, from the demands
// and the row order the plan holds.
TEST_F(AppPlan, TheRunGrantsEachCellOfARowTheJobsThePlanSays) {
  write_matrix("python: [cp310, cp311, cp312, cp313]\narchs: \"80;90\"\n");
  const Plan p = plan();
  ASSERT_EQ(p.cells.size(), 4u);
  std::vector<CellRun> runs;
  std::vector<std::string> rows;
  for (const PlannedCell& c : p.cells) {
    CellRun r = base_cell_run(c, (root_ / "wheelhouse").string());
    r.steps = {Step{"compile", {"compile"}, {}, {}, {}}, Step{"verify", {"verify"}, {}, {}, {}}};
    r.steps[0].releases_share = true;
    runs.push_back(std::move(r));
    rows.push_back(c.row);
  }
  first_of_each_row_first(runs, rows);
  test::FakeSupervisor sup;
  std::ostringstream printed;
  const auto status = make_status_printer(printed, false);
  RunSettings settings;
  settings.tick = std::chrono::milliseconds(0);
  RealFiles files;
  const RunReport report = run_cells(runs, p.budget, settings, sup, files, *status);
  ASSERT_EQ(report.exit_code(), 0) << printed.str();
  std::map<std::string, std::pair<std::string, std::string>> granted;  // cell -> MAX_JOBS, NVCC_THREADS
  for (const auto& [id, spec] : sup.specs) {
    if (spec.argv.at(0) == "compile")
      granted[test::env_value(spec, "FABUILD_CELL_ID")] = {test::env_value(spec, "MAX_JOBS"),
                                                           test::env_value(spec, "NVCC_THREADS")};
  }
  ASSERT_EQ(granted.size(), 4u);
  std::set<int> jobs;
  for (const PlannedCell& c : p.cells) {
    EXPECT_EQ(granted[c.id].first, std::to_string(c.jobs.max_jobs)) << c.id;
    EXPECT_EQ(granted[c.id].second, std::to_string(c.jobs.nvcc_threads)) << c.id;
    jobs.insert(c.jobs.max_jobs);
  }
  // The first alone: 27.2 GB (32 less the 4.8 GB reserve) at 10 GB a job (2 nvcc threads);
  // then the other three at once, from the cache, sharing the budget (the forecast without the
  // row order gave them 2 each, one after another).
  EXPECT_EQ(p.cells[0].jobs.max_jobs, 2);
  EXPECT_EQ(p.cells[1].jobs.max_jobs, 1);
  EXPECT_EQ(jobs.size(), 2u);
}

// What is filed comes from one read of the wheelhouse's manifest, whatever the number of cells.
TEST_F(AppPlan, TheManifestIsReadOnceForAllCells) {
  write_matrix("python: [cp311, cp312]\n", "[\"2.8.3\", \"2.8.2\"]");
  const Plan p = plan();
  ASSERT_EQ(p.cells.size(), 4u);
  for (const PlannedCell& c : p.cells) {
    FiledWheel entry;
    entry.wheel = "gone/" + c.id + ".whl";  // not there: each cell is built again, with a note
    entry.sha256 = std::string(64, '0');
    EXPECT_TRUE(record_filed(p.wheelhouse, c.id, entry));
  }
  const std::size_t before = manifest_parses();
  const SiteBuild b = plan_site_build(p, {0, 1, 2, 3}, false, system_);
  EXPECT_EQ(manifest_parses() - before, 1u);
  EXPECT_EQ(b.cells.size(), 4u);
  EXPECT_EQ(std::count_if(b.notes.begin(), b.notes.end(),
                          [](const std::string& n) { return n.find("is gone") != std::string::npos; }),
            4);
}

TEST_F(AppPlan, ACellForAnotherPlatformOrWithoutAToolkitSettlesAsFailedWithoutAProcess) {
  write_matrix("python: [cp312]\nplatform: [linux_x86_64, linux_aarch64]\n");
  system_.platform = "linux_x86_64";
  const Plan p = plan();
  ASSERT_EQ(p.cells.size(), 2u);
  const SiteBuild b = plan_site_build(p, {0, 1}, false, system_);
  ASSERT_EQ(b.settled.size(), 1u);
  EXPECT_EQ(b.settled.at(0).step, "site");
  EXPECT_THAT(b.settled.at(0).message,
              HasSubstr("the cell is for linux_aarch64, and this machine builds linux_x86_64"));
  EXPECT_EQ(b.cells.size(), 1u);

  // Without the host's toolkit (its nvcc no longer answers), toolkit: auto installs CUDA 13.0
  // from PyPI before the cell, and toolkit: host fails the cell at "toolkit", saying what was tried.
  runner_->answers.erase((cuda_ / "bin" / "nvcc").string());
  write_matrix("python: [cp312]\n");
  const SiteBuild from_pypi = plan_site_build(plan(), {0}, false, system_);
  ASSERT_TRUE(from_pypi.settled.empty());
  ASSERT_EQ(from_pypi.cells.size(), 1u);
  const auto toolkit_run = [&](std::size_t k) { return from_pypi.environments.at(k).kind == RunKind::kToolkit; };
  EXPECT_TRUE(std::any_of(from_pypi.needs.at(0).begin(), from_pypi.needs.at(0).end(), toolkit_run));
  write_matrix("python: [cp312]\ntoolkit: host\n");
  const SiteBuild none = plan_site_build(plan(), {0}, false, system_);
  ASSERT_EQ(none.settled.size(), 1u);
  EXPECT_EQ(none.settled.at(0).step, "toolkit");
  EXPECT_THAT(none.settled.at(0).message, HasSubstr(cuda_.string()));
}

TEST_F(AppPlan, AContainerCellWithoutAnEngineSaysWhatToDo) {
  write_matrix("python: [cp312]\n");
  std::ofstream(matrix_, std::ios::app) << "include: [{python: cp312, provision: container}]\n";
  const SiteBuild b = plan_site_build(plan(), {0}, false, system_);
  ASSERT_EQ(b.settled.size(), 1u);
  EXPECT_EQ(b.settled.at(0).step, "engine");
  EXPECT_THAT(b.settled.at(0).message, HasSubstr("docker: not on PATH; podman: not on PATH"));
  EXPECT_THAT(b.settled.at(0).message, HasSubstr("provision: host"));
}

}  // namespace
}  // namespace fabuild
