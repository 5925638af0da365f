#include <windows.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../support/scratch_dir.h"
#include "engine/launch.h"
#include "engine/runner.h"
#include "util/processes.h"

// The engine on Windows' supervisor, with real processes: the test helper
// (tests/windows/helper.cpp) is each cell's command.
namespace fabuild {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;

std::string helper() { return (fs::path(self_executable()).parent_path() / "fabuild_test_helper.exe").string(); }

class WindowsRunner : public ::testing::Test {
 protected:
  CellRun cell(const std::string& id, std::vector<std::string> args) {
    CellRun c;
    c.id = id;
    std::vector<std::string> argv = {helper()};
    argv.insert(argv.end(), args.begin(), args.end());
    c.steps = {Step{"build", argv, {}, {}, {}}};
    c.demand = Demand{1, 1, 1, 1};
    c.log_path = (dir.path() / "logs" / (id + ".log")).string();
    c.staging_dir = (dir.path() / ".staging" / id).string();
    c.output_dir = (dir.path() / "out" / id).string();
    c.kill_grace = 500ms;
    return c;
  }

  RunReport run(const std::vector<CellRun>& cells, double cores) {
    auto supervisor = make_process_supervisor();
    auto status = make_status_printer(printed, false);
    RunSettings settings;
    settings.base_env = Environment{{"SystemRoot", "C:\\windows"}};
    RealFiles files;
    return run_cells(cells, make_budget(Resources{cores, 16, "test", "test"}, BudgetSpec{}), settings, *supervisor,
                     files, *status);
  }

  // The helper says "ignoring" once its Ctrl-Break handler is in place.
  bool started(const std::string& id) const {
    return test::ScratchDir::read(dir.path() / "logs" / (id + ".log")).find("ignoring") != std::string::npos;
  }

  test::ScratchDir dir{"fabuild-windows-runner"};
  std::ostringstream printed;
};

TEST_F(WindowsRunner, CellsRunAndTheirOutputIsFiled) {
  CellRun a = cell("a", {"wheel", "{out}", "cp312-cp312-win_amd64", "2.8.3"});
  a.steps[0].templated = true;
  const RunReport r = run({a, cell("b", {"exit", "7"})}, 4);
  ASSERT_EQ(r.cells.size(), 2U);
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  EXPECT_TRUE(fs::exists(dir.path() / "out" / "a" / "flash_attn-2.8.3-cp312-cp312-win_amd64.whl"));
  EXPECT_EQ(r.cells[1].result, CellResult::kFailed);
  EXPECT_THAT(printed.str(), HasSubstr("FAILED: [code=7] b (exit 7"));
  EXPECT_EQ(r.exit_code(), kExitCellFailed);
}

TEST_F(WindowsRunner, ATimedOutCellIsTerminatedWithItsTree) {
  CellRun slow = cell("slow", {"leave-child", (dir.path() / "child.pid").string(), "60000"});
  slow.timeout = 1000ms;
  const auto start = Clock::now();
  const RunReport r = run({slow}, 4);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 20.0);
  EXPECT_EQ(r.cells[0].result, CellResult::kTimedOut);
  EXPECT_THAT(printed.str(), HasSubstr("timed out after 1s, terminated with its job"));
  long child = 0;
  std::ifstream(dir.path() / "child.pid") >> child;
  ASSERT_NE(child, 0);
  for (auto until = Clock::now() + 2s; process_alive(child) && Clock::now() < until;) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(process_alive(child));
}

// A step started beside the build (Step::starts_with, the import check's way) waits for its
// turn and goes on then; when its cell fails first, its job is terminated with it.
TEST_F(WindowsRunner, AStepStartedEarlyWaitsForItsTurnOrDiesWithItsCell) {
  CellRun ok = cell("ok", {"sleep", "500"});
  CellRun failed = cell("failed", {"exit", "3"});
  for (CellRun* c : {&ok, &failed}) {
    Step import{"import", {helper(), "wait-file", go_file(*c, Step{"import", {}, {}, {}, {}}), "60000"}, {}, {}, {}};
    import.starts_with = "build";
    c->steps.push_back(import);
  }
  const auto start = Clock::now();
  const RunReport r = run({ok, failed}, 4);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 20.0) << "a step started early was waited for";
  EXPECT_EQ(r.cells[0].result, CellResult::kOk) << r.cells[0].status.describe();
  EXPECT_EQ(r.cells[1].result, CellResult::kFailed);
  EXPECT_EQ(r.cells[1].step, "build");
}

// A real Ctrl-C on this console: the two running cells are stopped, the third never starts,
// and the run reads as interrupted (exit 130).
TEST_F(WindowsRunner, CtrlCStopsRunningCellsAndStartsNoMore) {
  // Run without a terminal (as in CI), Wine gives the test a console no event can be sent on: a
  // console of its own (which the cells share) can.
  FreeConsole();
  ASSERT_TRUE(AllocConsole()) << GetLastError();
  std::vector<CellRun> cells;
  for (const char* id : {"a", "b", "c"}) cells.push_back(cell(id, {"ignore-break", "60000"}));
  std::thread interrupter([this] {
    // Once both running cells have said they started.
    for (auto until = Clock::now() + 20s; Clock::now() < until; std::this_thread::sleep_for(20ms)) {
      if (started("a") && started("b")) break;
    }
    GenerateConsoleCtrlEvent(CTRL_C_EVENT, 0);
  });
  const auto start = Clock::now();
  const RunReport r = run(cells, 2);  // one job each: two at once
  interrupter.join();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 30.0);
  EXPECT_EQ(r.interrupt_signal, SIGINT);
  EXPECT_EQ(r.exit_code(), kExitInterrupted);
  EXPECT_EQ(r.cells[0].result, CellResult::kCancelled);
  EXPECT_EQ(r.cells[1].result, CellResult::kCancelled);
  EXPECT_EQ(r.cells[2].result, CellResult::kNotRun);
  EXPECT_THAT(printed.str(), HasSubstr("interrupted: stopping 2 running cells (Ctrl-Break, then TerminateJobObject"));
}

}  // namespace
}  // namespace fabuild
