// The runner with real processes: what its loop does while a cell works in fabuild itself
// (verifying a wheel of hundreds of megabytes takes seconds), and the facts steps pass on.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include "../support/runner_fixture.h"
#include "../support/scratch_dir.h"

#include "engine/runner.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class RunnerLoop : public ::testing::Test {
 protected:
  CellRun cell(const std::string& id) {
    CellRun c;
    c.id = id;
    c.demand = Demand{1, 1, 1, 1};  // one job each: the cells run side by side
    c.log_path = (dir.path() / "logs" / (id + ".log")).string();
    c.staging_dir = (dir.path() / ".staging" / id).string();
    c.output_dir = (dir.path() / "out" / id).string();
    return c;
  }

  // A long tick: wake(), not the tick, says an in-process step is done.
  RunReport run(const std::vector<CellRun>& cells) { return test::run_for_real(cells, printed, milliseconds(10000)); }

  test::ScratchDir dir{"fabuild-runner-loop"};
  std::ostringstream printed;
};

// A cell busy in fabuild for 3 s beside a cell that writes 5 MB and must stop after 1 s: the
// loop reads the chatty cell's output and enforces its time limit while the other works, so it
// ends at its limit with all its output logged, long before the busy cell is done.
TEST_F(RunnerLoop, InProcessWorkDoesNotHoldTheOthersUp) {
  CellRun busy = cell("busy");
  busy.steps = {Step{"verify", {}, {}, {}, [](StepContext&) -> StepResult {
                       std::this_thread::sleep_for(std::chrono::seconds(3));
                       return {};
                     }}};
  CellRun chatty = cell("chatty");
  chatty.timeout = milliseconds(1000);
  chatty.kill_grace = milliseconds(200);
  chatty.steps = {Step{
      "build", {"sh", "-c", "head -c 5000000 /dev/zero | tr '\\\\0' x; echo; echo written; sleep 30"}, {}, {}, {}}};
  const auto start = Clock::now();
  const RunReport r = run({busy, chatty});
  ASSERT_EQ(r.cells.size(), 2u);
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  EXPECT_GE(r.cells[0].elapsed, milliseconds(3000));
  ASSERT_TRUE(r.cells[1].started_at);
  EXPECT_LT(*r.cells[1].started_at, milliseconds(500)) << "the cells did not run side by side";
  EXPECT_EQ(r.cells[1].result, CellResult::kTimedOut) << r.cells[1].status.describe();
  EXPECT_LT(r.cells[1].elapsed, milliseconds(2500)) << "the chatty cell's limit waited for the busy cell";
  EXPECT_GE(fs::file_size(chatty.log_path), 5000000u);
  EXPECT_THAT(test::ScratchDir::read(chatty.log_path), HasSubstr("written"));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
}

// A cell that needs more disk than its staging directory's disk has fails before its first
// step, saying how much there is and how much it needs; the others run.
TEST_F(RunnerLoop, ACellShortOfDiskFailsBeforeItsFirstStep) {
  CellRun big = cell("big");
  big.disk_need = std::uint64_t{1} << 60;  // an exabyte
  big.steps = {Step{"build", {"sh", "-c", "echo ran > ran"}, dir.path().string(), {}, {}}};
  CellRun small = cell("small");
  small.disk_need = 1;
  small.steps = {Step{"build", {"true"}, {}, {}, {}}};
  const RunReport r = run({big, small});
  EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
  EXPECT_EQ(r.cells[0].step, "space");
  EXPECT_THAT(r.cells[0].message, HasSubstr("GB free on the disk of " + big.output_dir));
  EXPECT_THAT(r.cells[0].message, HasSubstr("the cell needs about 1152921504.6 GB"));
  EXPECT_FALSE(fs::exists(dir.path() / "ran")) << "its step ran";
  EXPECT_EQ(r.cells[1].result, CellResult::kOk);
}

// Facts flow forward: a process reports them in its output, an in-process step reads and adds
// to them, and the outcome carries them; with the moments the cell started and gave its share
// back (after the step that releases it).
TEST_F(RunnerLoop, FactsFlowFromStepToStepAndOutOfTheRun) {
  CellRun c = cell("a");
  Step check{"check",
             {"sh", "-c", "echo noise; echo 'fabuild-fact: torch_version=2.11.0+cu130'; echo 'fabuild-fact: bad'"},
             {},
             {},
             {}};
  check.reports_facts = true;
  Step build{"build", {"sh", "-c", "echo 'fabuild-fact: ignored=1'"}, {}, {}, {}};  // reports nothing
  build.releases_share = true;
  Step file{"file", {}, {}, {}, [](StepContext& ctx) -> StepResult {
              if (fact(ctx.facts, "torch_version") != "2.11.0+cu130") return fail("no torch fact");
              ctx.facts["filed"] = "yes";
              return {};
            }};
  c.steps = {check, build, file};
  const RunReport r = run({c});
  ASSERT_EQ(r.cells[0].result, CellResult::kOk) << r.cells[0].message;
  EXPECT_EQ(r.cells[0].facts, (Facts{{"filed", "yes"}, {"torch_version", "2.11.0+cu130"}}));
  ASSERT_TRUE(r.cells[0].started_at && r.cells[0].released_at);
  EXPECT_LE(*r.cells[0].started_at, *r.cells[0].released_at);
  EXPECT_LE(*r.cells[0].released_at,
            *r.cells[0].started_at + r.cells[0].elapsed + milliseconds(2));  // each rounded down
}

// A step's facts are its own output's: a step started beside it (the import beside the build)
// writes to the same log meanwhile, and what it prints there is none of the step's facts.
TEST_F(RunnerLoop, AStepsFactsAreItsOwnOutputsNotTheLogs) {
  CellRun c = cell("a");
  Step check{"check", {"sh", "-c", "sleep 0.5; echo 'fabuild-fact: torch_version=2.11.0+cu130'"}, {}, {}, {}};
  check.reports_facts = true;
  Step beside{"beside", {"sh", "-c", "echo 'fabuild-fact: stray=1'"}, {}, {}, {}};
  beside.starts_with = "check";
  c.steps = {check, beside};
  const RunReport r = run({c});
  ASSERT_EQ(r.cells[0].result, CellResult::kOk) << r.cells[0].message;
  EXPECT_THAT(test::ScratchDir::read(c.log_path), HasSubstr("fabuild-fact: stray=1"));
  EXPECT_EQ(r.cells[0].facts, (Facts{{"torch_version", "2.11.0+cu130"}}));
}

// What a cell's processes get: MAX_JOBS and NVCC_THREADS from the scheduler's grant, once, and
// CMAKE_BUILD_PARALLEL_LEVEL with MAX_JOBS's value (library cells build with cmake --build).
TEST_F(RunnerLoop, MaxJobsIsSetOnceFromTheGrant) {
  CellRun c = cell("a");
  c.env = {{"CUDA_HOME", "/opt/cuda"}};
  c.nvcc_threads = 2;
  c.steps = {Step{"build",
                  {"sh", "-c", "env | grep -E '^(CMAKE_BUILD_PARALLEL_LEVEL|MAX_JOBS|NVCC_THREADS)=' | sort"},
                  {},
                  {},
                  {}}};
  const RunReport r = run({c});
  ASSERT_EQ(r.cells[0].result, CellResult::kOk);
  const std::string log = test::ScratchDir::read(c.log_path);
  EXPECT_THAT(log, HasSubstr(fmt::format("CMAKE_BUILD_PARALLEL_LEVEL={0}\nMAX_JOBS={0}\nNVCC_THREADS=2\n",
                                         r.cells[0].max_jobs)));
}

// A cell's cleanup (removing its container: `docker rm` may take a while) runs as a process
// beside the others: a cell whose limit passes meanwhile is stopped at its limit.
TEST_F(RunnerLoop, ACleanupDoesNotHoldTheOthersUp) {
  CellRun cleaning = cell("cleaning");
  cleaning.steps = {Step{"build", {"sh", "-c", "true"}, {}, {}, {}}};
  cleaning.cleanup = Cleanup{{"sh", "-c", "sleep 3; echo removed"}, {"PATH=/usr/bin:/bin"}, milliseconds(10000), {}};
  CellRun slow = cell("slow");
  slow.timeout = milliseconds(1000);
  slow.kill_grace = milliseconds(200);
  slow.steps = {Step{"build", {"sh", "-c", "sleep 30"}, {}, {}, {}}};
  const RunReport r = run({cleaning, slow});
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  EXPECT_THAT(test::ScratchDir::read(cleaning.log_path), HasSubstr("removed"));
  EXPECT_EQ(r.cells[1].result, CellResult::kTimedOut);
  EXPECT_LT(r.cells[1].elapsed, milliseconds(2500)) << "the slow cell's limit waited for the cleanup";
}

// The import check's way (Step::starts_with): its slow start (1 s here, torch's import in a real
// cell) runs beside the build (1 s), and what it does after $FABUILD_GO appears follows the
// build: the cell takes about 1 s, not 2.
TEST_F(RunnerLoop, AStepStartedEarlyOverlapsTheStepItStartsWith) {
  CellRun c = cell("a");
  Step build{"build", {"sh", "-c", "sleep 1; echo built > \"$FABUILD_OUT_DIR/wheel\""}, {}, {}, {}};
  Step import{"import",
              {"sh", "-c",
               "sleep 1; while [ ! -e \"$FABUILD_GO\" ]; do sleep 0.01; done; echo \"imported $(cat "
               "\"$FABUILD_OUT_DIR/wheel\")\""},
              {},
              {},
              {}};
  import.starts_with = "build";
  c.steps = {build, import};
  const RunReport r = run({c});
  ASSERT_EQ(r.cells[0].result, CellResult::kOk) << r.cells[0].status.describe();
  EXPECT_LT(r.cells[0].elapsed, milliseconds(1800)) << "the import's start did not overlap the build";
  EXPECT_THAT(test::ScratchDir::read(c.log_path), HasSubstr("imported built"));
}

// A cell whose build fails does not wait for the step started beside it: that one is killed.
TEST_F(RunnerLoop, AStepStartedEarlyDiesWithItsCell) {
  CellRun c = cell("a");
  Step import{"import", {"sh", "-c", "sleep 30"}, {}, {}, {}};
  import.starts_with = "build";
  c.steps = {Step{"build", {"sh", "-c", "exit 3"}, {}, {}, {}}, import};
  const auto start = Clock::now();
  const RunReport r = run({c});
  EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
  EXPECT_EQ(r.cells[0].step, "build");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << "the run waited for the step started early";
}

}  // namespace
}  // namespace fabuild
