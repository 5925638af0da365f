// Steps started early (Step::starts_with): the import check loads torch while the compile runs;
// and how their processes are logged.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../support/runner_fixture.h"
#include "engine/launch.h"
#include "engine/runner.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::env_value;
using test::Runner;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// build, then verify (in-process), then import: import started beside build.
CellRun with_early_import(CellRun c, std::vector<std::string>* seen_by_verify = nullptr) {
  Step build{"build", {"build", c.id}, {}, {}, {}};
  build.releases_share = true;
  Step verify{"verify", {}, {}, {}, [seen_by_verify](StepContext& ctx) -> StepResult {
                if (seen_by_verify != nullptr) {
                  const std::string go = (fs::path(ctx.cell.staging_dir) / ".go-import").string();
                  seen_by_verify->push_back(fs::exists(go) ? "go file" : "no go file");
                }
                return {};
              }};
  Step import{"import", {"import", c.id}, {}, {}, {}};
  import.starts_with = "build";
  c.steps = {build, verify, import};
  return c;
}

TEST_F(Runner, AStepStartsBesideTheOneItNamesAndGoesOnWhenItsTurnComes) {
  std::vector<std::string> started;
  sup.on_start = [&](ProcessSupervisor::Id, const ProcessSpec& spec) {
    started.push_back(spec.argv[0] + " (" + std::to_string(sup.running_ids.size()) + " running)");
  };
  std::vector<std::string> seen_by_verify;
  const CellRun c = with_early_import(cell("a"), &seen_by_verify);
  const RunReport r = run({c}, budget(16, 100));
  ASSERT_EQ(r.cells[0].result, CellResult::kOk) << r.cells[0].message;
  EXPECT_THAT(started, ElementsAre("build (1 running)", "import (2 running)"));
  // The go file comes when its turn comes: after the steps between, never before.
  EXPECT_THAT(seen_by_verify, ElementsAre("no go file"));
  EXPECT_EQ(env_value(sup.specs.at(2), "FABUILD_GO"), go_file(c, c.steps[2]));
  EXPECT_EQ(env_value(sup.specs.at(1), "FABUILD_GO"), "");
  EXPECT_EQ(env_value(sup.specs.at(2), "MAX_JOBS"), env_value(sup.specs.at(1), "MAX_JOBS"));
  const std::string log = test::ScratchDir::read(c.log_path);
  EXPECT_THAT(log, HasSubstr("fabuild: step import, started beside build: [import] [a]"));
  EXPECT_THAT(log, HasSubstr("fabuild: step import: its turn"));
  EXPECT_THAT(log, HasSubstr("fabuild: step import took "));
}

// It ended before its turn (torch imported, the wheel not yet there: the fake's order): its
// outcome counts when the turn comes, a failure as the step's.
TEST_F(Runner, AStepThatEndsBeforeItsTurnCountsThen) {
  sup.pick = [](std::size_t running) { return running - 1; };  // the newest first: import before build
  sup.failing_ids = {2};
  const RunReport r = run({with_early_import(cell("a"))}, budget(16, 100));
  EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
  EXPECT_EQ(r.cells[0].step, "import");
  EXPECT_THAT(printed.str(), HasSubstr("a (import: exit 1"));
}

TEST_F(Runner, AStepStartedEarlyIsStoppedWhenItsCellFailsFirst) {
  sup.failing_ids = {1};  // the build
  const RunReport r = run({with_early_import(cell("a")), cell("b")}, budget(16, 100));
  EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
  EXPECT_EQ(r.cells[0].step, "build");
  EXPECT_THAT(sup.cancelled_ids, ElementsAre(2));
  EXPECT_EQ(r.cells[1].result, CellResult::kOk);
  EXPECT_TRUE(sup.running_ids.empty());
  EXPECT_FALSE(fs::exists(root / ".staging" / "a"));
}

// A check after the import sends the cell back to its build (CellRun::retry): the import started
// beside the second build waits for its own turn, not the go file of the first. The fake import
// fails when it finds a go file as it starts, as the real one fails importing a module not yet built.
TEST_F(Runner, GoingBackToABuildGivesTheStepsAfterItTheirTurnAnew) {
  CellRun c = with_early_import(cell("a"));
  int checks = 0;
  c.steps.push_back(Step{"archs", {}, {}, {}, [&checks](StepContext&) -> StepResult {
                           if (++checks == 1) return fail("sm_80 where sm_90 was asked");
                           return {};
                         }});
  c.retry = [](const std::string&, const std::string&, Facts&) { return std::string("build"); };
  std::vector<std::string> imports;
  sup.on_start = [&](ProcessSupervisor::Id id, const ProcessSpec& spec) {
    if (spec.argv[0] != "import") return;
    const bool go = fs::exists(env_value(spec, "FABUILD_GO"));
    imports.push_back(go ? "go file at its start" : "waits for its turn");
    if (go) sup.failing_ids.insert(id);
  };
  const RunReport r = run({c}, budget(16, 100));
  EXPECT_EQ(r.cells[0].result, CellResult::kOk) << r.cells[0].step << ": " << r.cells[0].message;
  EXPECT_EQ(checks, 2);
  EXPECT_THAT(imports, ElementsAre("waits for its turn", "waits for its turn"));
  EXPECT_THAT(test::ScratchDir::read(c.log_path), HasSubstr("fabuild: going back to step build"));
}

TEST_F(Runner, AStepNamingNoEarlierStepStartsInItsTurn) {
  CellRun c = with_early_import(cell("a"));
  c.steps[2].starts_with = "no such step";
  std::vector<std::size_t> running_at_start;
  sup.on_start = [&](ProcessSupervisor::Id, const ProcessSpec&) { running_at_start.push_back(sup.running_ids.size()); };
  const RunReport r = run({c}, budget(16, 100));
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  EXPECT_THAT(running_at_start, ElementsAre(1, 1));
}

// A `python -c` program fabuild carries is logged as what it is, not as its text over many lines.
TEST_F(Runner, AProgramGivenWholeIsLoggedInOneLine) {
  CellRun c = cell("a");
  c.steps = {Step{"import", {"python", "-c", "import torch\nprint(torch.__file__)\n", "/smoke"}, {}, {}, {}}};
  ASSERT_EQ(run({c}, budget(16, 100)).cells[0].result, CellResult::kOk);
  EXPECT_THAT(test::ScratchDir::read(c.log_path),
              HasSubstr("fabuild: step import: [python] [-c] [<a program of 2 lines>] [/smoke]"));
  EXPECT_EQ(sup.specs.at(1).argv[2], "import torch\nprint(torch.__file__)\n");  // passed whole
}

}  // namespace
}  // namespace fabuild
