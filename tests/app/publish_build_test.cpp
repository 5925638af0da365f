// What a build leaves besides wheels (app/publish_build.h): the run's record, its summary and
// the page, from the plan and the outcomes, and the exit code the build had.

#include "app/publish_build.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/fake_files.h"
#include "plan_fixture.h"
#include "wheel/manifest.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;

TEST_F(AppPlan, PublishingABuildRecordsItsCellsAndTheMatrixAsRead) {
  write_matrix("python: [cp311, cp312]\n");
  Options o;
  o.sets.push_back(parse_axis_set("python=cp311,cp312"));
  const Plan p = plan(o);
  ASSERT_EQ(p.cells.size(), 2u);
  std::vector<CellOutcome> cells(2);
  cells[0].id = p.cells[0].id;
  cells[0].result = CellResult::kFailed;
  cells[0].status.code = 1;
  cells[0].step = "build";
  cells[0].message = "nvcc exited 1";
  cells[1].id = p.cells[1].id;
  cells[1].result = CellResult::kUpToDate;
  FinishedRun run;
  run.started = "2026-11-26T23:00:00Z";
  run.exit_code = kExitCellFailed;
  run.cells = &cells;
  FiledWheel gone;  // an entry whose wheel is not there: the page shows the cell, nothing is published
  gone.wheel = "fa2.8.3/torch2.11/cu130/gone.whl";
  gone.sha256 = std::string(64, '0');
  EXPECT_TRUE(record_filed(p.wheelhouse, p.cells[1].id, gone));
  std::ostringstream out;
  const std::size_t parses = manifest_parses();
  EXPECT_EQ(publish_build(p, run, *system_.files, out), kExitCellFailed) << "the build's code, whatever publishing did";
  EXPECT_EQ(manifest_parses() - parses, 1u) << "the manifest read once for the records, the catalog and the page";
  EXPECT_THAT(out.str(), HasSubstr("fabuild: index: 0 wheels"));

  const fs::path house(p.wheelhouse);
  const auto report = nlohmann::json::parse(test::ScratchDir::read(house / "report.json"));
  EXPECT_EQ(report["matrix"], matrix_.string() + " --set python=cp311,cp312");
  ASSERT_EQ(report["cells"].size(), 2u);
  EXPECT_EQ(report["cells"][0]["id"], p.cells[0].id);
  EXPECT_EQ(report["cells"][0]["status"], "failed");
  EXPECT_EQ(report["cells"][1]["status"], "up to date");
  EXPECT_THAT(test::ScratchDir::read(house / "summary.md"), HasSubstr("--set python=cp311,cp312"));
  EXPECT_TRUE(fs::exists(house / "index.html"));
}

TEST_F(AppPlan, AWheelhouseThatCannotBeMadeIsReportedAndTheBuildFails) {
  write_matrix("python: [cp312]\n");
  const Plan p = plan();
  std::vector<CellOutcome> cells(1);
  cells[0].id = p.cells[0].id;
  cells[0].result = CellResult::kOk;
  FinishedRun run;
  run.exit_code = kExitOk;
  run.cells = &cells;
  test::FakeFiles files;
  files.fail_on(test::FileOp::kCreateDirectories, p.wheelhouse);
  std::ostringstream out;
  EXPECT_EQ(publish_build(p, run, files, out), kExitCellFailed) << "not the build's 0: nothing was published";
  EXPECT_EQ(out.str(), "");
  EXPECT_FALSE(fs::exists(fs::path(p.wheelhouse) / "report.json"));
}

TEST_F(AppPlan, TheRecordNamesACellsLogOnlyWhereTheLogIs) {
  write_matrix("python: [cp311, cp312]\n");
  Options o;
  o.sets.push_back(parse_axis_set("python=cp311,cp312"));
  const Plan p = plan(o);
  ASSERT_EQ(p.cells.size(), 2u);
  const fs::path house(p.wheelhouse);
  std::vector<CellOutcome> cells(2);
  for (std::size_t i = 0; i < 2; ++i) {
    cells[i].id = p.cells[i].id;
    cells[i].result = CellResult::kFailed;
    cells[i].status.code = 1;
    cells[i].log_path = (house / "logs" / (p.cells[i].id + ".log")).string();
  }
  FinishedRun run;
  run.exit_code = kExitCellFailed;
  run.cells = &cells;
  test::FakeFiles files;  // what app sees: the first cell's log, not the second's
  files.add_file(cells[0].log_path, "FAILED\n");
  fs::create_directories(house);  // where the publish layer writes the record
  std::ostringstream out;
  EXPECT_EQ(publish_build(p, run, files, out), kExitCellFailed);
  const auto report = nlohmann::json::parse(test::ScratchDir::read(house / "report.json"));
  EXPECT_EQ(report["cells"][0]["log"], "logs/" + p.cells[0].id + ".log");
  EXPECT_EQ(report["cells"][1]["log"], "");
}

}  // namespace
}  // namespace fabuild
