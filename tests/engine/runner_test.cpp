#include "engine/runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include <algorithm>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "../support/fake_files.h"
#include "../support/runner_fixture.h"
#include "util/error.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

using test::env_value;
using test::FakeSupervisor;
using test::Runner;
using test::templated;

TEST_F(Runner, RunsEveryCellAndFilesOutputsOfThoseThatSucceed) {
  sup.failing = {"b"};
  const RunReport r = run({cell("a"), cell("b"), cell("c")}, budget(16, 100));
  ASSERT_EQ(r.cells.size(), 3u);
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  EXPECT_EQ(r.cells[1].result, CellResult::kFailed);
  EXPECT_EQ(r.cells[2].result, CellResult::kOk);
  EXPECT_EQ(r.exit_code(), kExitCellFailed);
  EXPECT_TRUE(fs::exists(root / "out" / "a" / "a.whl"));
  EXPECT_FALSE(fs::exists(root / "out" / "b"));       // a failed cell files nothing
  EXPECT_FALSE(fs::exists(root / ".staging" / "b"));  // and leaves nothing behind
  EXPECT_THAT(printed.str(), HasSubstr("FAILED: [code=1] b (exit 1"));
  EXPECT_THAT(printed.str(), HasSubstr("log: " + (root / "logs" / "b.log").string()));
}

// A running cell's progress is asked with the compiles it was granted at once (its MAX_JOBS):
// its time left knows how many run side by side (app/compile_follower.h). The status line
// shows the oldest cell's answer.
TEST_F(Runner, AProgressIsAskedWithTheCompilesTheCellWasGranted) {
  std::map<std::string, std::set<int>> asked;
  std::vector<CellRun> cells = {cell("a"), cell("b")};
  for (CellRun& c : cells) {
    c.progress = [&asked, id = c.id](int slots) {
      asked[id].insert(slots);
      return CellProgress{"3/7 units", 4};
    };
  }
  const RunReport r = run(cells, budget(16, 100));
  ASSERT_EQ(r.cells.size(), 2u);
  ASSERT_FALSE(asked.empty());
  for (const auto& [id, slots] : asked) {
    const auto& report = id == "a" ? r.cells[0] : r.cells[1];
    EXPECT_EQ(slots, std::set<int>{report.max_jobs}) << id;
    EXPECT_GT(report.max_jobs, 1) << id;
  }
}

// A cell's notes to fabuild in its staging directory (dot files: its compile tally) are not
// outputs: they never reach the wheelhouse.
TEST_F(Runner, DotFilesInStagingAreNotFiled) {
  CellRun c = cell("a");
  c.steps.insert(c.steps.begin(), Step{"note", {}, {}, {}, [](StepContext& ctx) -> StepResult {
                                         std::ofstream(fs::path(ctx.cell.staging_dir) / ".objcache.tally")
                                             << "hit\t1\n";
                                         return {};
                                       }});
  const RunReport r = run({c}, budget(16, 100));
  ASSERT_EQ(r.cells[0].result, CellResult::kOk);
  EXPECT_TRUE(fs::exists(root / "out" / "a" / "a.whl"));
  EXPECT_FALSE(fs::exists(root / "out" / "a" / ".objcache.tally"));
  EXPECT_EQ(r.cells[0].filed, std::vector<std::string>{"a.whl"});
}

TEST_F(Runner, ArgvPlaceholdersAndEnvironment) {
  RunSettings s;
  s.base_env = Environment::parse(std::vector<std::string>{"PATH=/usr/bin", "HOME=/home/x"});
  CellRun c = cell("a", 5, 2);
  c.env = {{"FLASH_ATTN_CUDA_ARCHS", "80;90"}, {"MAX_JOBS", "999"}};
  run({c}, budget(8, 100), s);
  const ProcessSpec& spec = sup.specs.at(1);
  EXPECT_EQ(spec.argv, (std::vector<std::string>{"build", "a", "--jobs=4"}));
  EXPECT_EQ(env_value(spec, "MAX_JOBS"), "4");                    // the scheduler's, not a stale one
  EXPECT_EQ(env_value(spec, "CMAKE_BUILD_PARALLEL_LEVEL"), "4");  // the same, for cmake --build
  EXPECT_EQ(env_value(spec, "NVCC_THREADS"), "2");
  EXPECT_EQ(env_value(spec, "FLASH_ATTN_CUDA_ARCHS"), "80;90");
  EXPECT_EQ(env_value(spec, "PATH"), "/usr/bin");
  EXPECT_EQ(env_value(spec, "FABUILD_CELL_ID"), "a");
  EXPECT_EQ(spec.env.size(), 8u);
}

// A cell without nvcc (ROCm: hipcc) gets MAX_JOBS and no NVCC_THREADS, so the plan's
// "MAX_JOBS=JOBS" is all that is set.
TEST_F(Runner, ACellWithoutNvccGetsNoNvccThreads) {
  CellRun c = cell("a", 5, 2);
  c.nvcc_threads = 0;
  run({c}, budget(8, 100));
  const ProcessSpec& spec = sup.specs.at(1);
  EXPECT_EQ(env_value(spec, "MAX_JOBS"), "4");
  EXPECT_FALSE(
      std::any_of(spec.env.begin(), spec.env.end(), [](const auto& e) { return e.starts_with("NVCC_THREADS="); }));
}

// What the manual Windows recipe sets with `set NVCC_THREADS=1 ` reaches nvcc as "1 " ("nvcc
// fatal : '1 ': expected a number"). fabuild starts no shell: each value reaches the child as
// the bytes fabuild holds, the scheduler's MAX_JOBS and NVCC_THREADS over whatever fabuild's own
// environment had, and a matrix value exactly as the matrix wrote it.
TEST_F(Runner, ValuesReachTheChildVerbatimWithNoShellBetween) {
  RunSettings s;
  s.base_env = Environment::parse(std::vector<std::string>{"NVCC_THREADS=1 ", "MAX_JOBS=1", "Path=C:\\Windows"});
  CellRun c = cell("a", 5, 2);
  c.env = {{"DISTUTILS_USE_SDK", "1"},
           {"INCLUDE", "C:\\Program Files (x86)\\Windows Kits\\10\\include\\ucrt;C:\\VS\\include"},
           {"NVCC_APPEND_FLAGS", "-Xcompiler=\"/Zc:preprocessor\" "}};
  run({c}, budget(16, 31), s);
  const ProcessSpec& spec = sup.specs.at(1);
  EXPECT_EQ(env_value(spec, "NVCC_THREADS"), "2");
  EXPECT_EQ(env_value(spec, "MAX_JOBS"), "6");  // from the budget's memory: 31 GB at 5 GB a job, not 1
  EXPECT_EQ(env_value(spec, "INCLUDE"), "C:\\Program Files (x86)\\Windows Kits\\10\\include\\ucrt;C:\\VS\\include");
  EXPECT_EQ(env_value(spec, "NVCC_APPEND_FLAGS"), "-Xcompiler=\"/Zc:preprocessor\" ");
  EXPECT_EQ(std::count_if(spec.env.begin(), spec.env.end(),
                          [](const std::string& e) { return e.starts_with("NVCC_THREADS="); }),
            1);
}

TEST_F(Runner, BudgetHoldsWhileCellsEndInAnyOrder) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 30; ++trial) {
    const Budget b =
        budget(std::uniform_int_distribution<int>(1, 32)(rng), std::uniform_real_distribution<double>(4, 200)(rng));
    std::vector<CellRun> cells;
    std::map<std::string, double> gb;
    const int n = std::uniform_int_distribution<int>(1, 12)(rng);
    for (int i = 0; i < n; ++i) {
      const int threads = std::uniform_int_distribution<int>(1, 4)(rng);
      cells.push_back(cell("c" + std::to_string(i), threads * 5.0, threads, threads));
      gb[cells.back().id] = threads * 5.0;
    }
    FakeSupervisor fake;
    std::set<std::string> running;
    fake.pick = [&](std::size_t k) { return std::uniform_int_distribution<std::size_t>(0, k - 1)(rng); };
    fake.on_start = [&](ProcessSupervisor::Id, const ProcessSpec&) {
      double used = 0;
      for (const auto id : fake.running_ids) {
        const ProcessSpec& s = fake.specs[id];
        used += std::stoi(env_value(s, "MAX_JOBS")) * gb[env_value(s, "FABUILD_CELL_ID")];
      }
      if (fake.running_ids.size() > 1) {
        ASSERT_LE(used, b.memory_gb + 1e-9);
      }
    };
    auto status = make_status_printer(printed, false);
    RunSettings s;
    s.tick = milliseconds(0);
    RealFiles files;
    const RunReport r = run_cells(cells, b, s, fake, files, *status);
    for (const auto& c : r.cells) ASSERT_EQ(c.result, CellResult::kOk) << c.id;
  }
}

// Filing goes through Files: a cell whose output cannot be moved into the wheelhouse fails with
// the reason, and its staging directory is removed all the same.
TEST_F(Runner, ACellWhoseOutputCannotBeFiledFailsAndSaysWhy) {
  auto failing = std::make_shared<test::FailingFiles>();
  const CellRun a = cell("a");
  failing->fail_on(test::FileOp::kRename, fs::path(a.staging_dir) / "a.whl");
  files = failing;
  const RunReport r = run({a, cell("b")}, budget(4, 16));
  EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
  EXPECT_NE(r.cells[0].message.find("cannot file its outputs: cannot rename"), std::string::npos) << r.cells[0].message;
  EXPECT_FALSE(fs::exists(a.staging_dir));
  EXPECT_EQ(r.cells[1].result, CellResult::kOk);
  EXPECT_EQ(r.cells[1].filed, std::vector<std::string>{"b.whl"});
  EXPECT_TRUE(fs::exists(fs::path(r.cells[1].output_dir) / "b.whl"));
}

TEST_F(Runner, FailFastStopsTheRest) {
  RunSettings s;
  s.fail_fast = true;
  sup.failing = {"a"};
  // One cell at a time: a fails first, b and c never start.
  const RunReport r = run({cell("a", 5, 1, 3), cell("b"), cell("c")}, budget(1, 10), s);
  EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
  EXPECT_EQ(r.cells[1].result, CellResult::kNotRun);
  EXPECT_EQ(r.cells[2].result, CellResult::kNotRun);
  EXPECT_EQ(r.exit_code(), kExitCellFailed);
  EXPECT_THAT(printed.str(), HasSubstr("--fail-fast: a failed; starting no more cells"));
}

TEST_F(Runner, InterruptCancelsRunningCellsAndStartsNoMore) {
  sup.interrupt_at_wait = {1};
  std::vector<CellRun> cells = {cell("a"), cell("b"), cell("c"), cell("d")};
  for (auto& c : cells) c.kill_grace = milliseconds(2500);
  // Two run at once (8 jobs in the budget, at least 4 each), two wait.
  const RunReport r = run(cells, budget(8, 40));
  EXPECT_EQ(r.interrupt_signal, SIGINT);
  EXPECT_EQ(r.exit_code(), kExitInterrupted);
  EXPECT_EQ(r.cells[0].result, CellResult::kCancelled);
  EXPECT_EQ(r.cells[1].result, CellResult::kCancelled);
  EXPECT_EQ(r.cells[2].result, CellResult::kNotRun);
  ASSERT_EQ(sup.cancel_graces.size(), 1u);
  EXPECT_EQ(sup.cancel_graces[0], milliseconds(2500));
  EXPECT_FALSE(fs::exists(root / "out"));  // cancelled cells file nothing
  EXPECT_FALSE(fs::exists(root / ".staging" / "a"));
  EXPECT_THAT(printed.str(), HasSubstr("interrupted: stopping 2 running cells"));
}

TEST_F(Runner, SecondInterruptKillsAtOnce) {
  sup.interrupt_at_wait = {1, 2};
  const RunReport r = run({cell("a"), cell("b")}, budget(2, 10));
  ASSERT_EQ(sup.cancel_graces.size(), 2u);
  EXPECT_EQ(sup.cancel_graces[1], milliseconds(0));
  EXPECT_EQ(r.exit_code(), kExitInterrupted);
}

TEST_F(Runner, LogStartsWithWhatRan) {
  run({cell("a")}, budget(2, 10));
  std::ifstream log(root / "logs" / "a.log");
  std::string first;
  std::getline(log, first);
  EXPECT_EQ(first, "fabuild: cell a, MAX_JOBS=2 NVCC_THREADS=1");
}

}  // namespace
}  // namespace fabuild

namespace fabuild {
namespace {

TEST_F(Runner, StepsRunInOrderInOneShareOfTheBudget) {
  std::vector<std::string> order;
  CellRun c = cell("a");
  c.steps = {templated(Step{"prepare", {"prep", "{id}"}, "/tmp", {{"STEP", "1"}}, {}}),
             Step{"check",
                  {},
                  {},
                  {},
                  [&](StepContext& ctx) -> StepResult {
                    order.push_back("check " + ctx.cell.id);
                    return {};
                  }},
             templated(Step{"build", {"build", "-j{max_jobs}"}, {}, {}, {}})};
  const RunReport r = run({c}, budget(2, 10));
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  ASSERT_EQ(sup.specs.size(), 2u);
  EXPECT_EQ(sup.specs.at(1).argv, (std::vector<std::string>{"prep", "a"}));
  EXPECT_EQ(sup.specs.at(1).cwd, "/tmp");
  EXPECT_EQ(env_value(sup.specs.at(1), "STEP"), "1");
  EXPECT_EQ(sup.specs.at(2).argv, (std::vector<std::string>{"build", "-j2"}));
  EXPECT_EQ(env_value(sup.specs.at(2), "STEP"), "");
  EXPECT_EQ(order, (std::vector<std::string>{"check a"}));
  const std::string log = test::ScratchDir::read(c.log_path);
  EXPECT_NE(log.find("fabuild: step prepare: [prep] [a]"), std::string::npos) << log;
  EXPECT_NE(log.find("fabuild: step check"), std::string::npos) << log;
}

// One cell at a time fits (two cores, two jobs each): the second starts as soon as the first's
// compile ends, while the first still runs its light steps, and gets the whole budget.
TEST_F(Runner, TheNextCellStartsWhileTheLastOneRunsItsLightSteps) {
  std::vector<CellRun> cells;
  for (const char* id : {"a", "b"}) {
    CellRun c = cell(id);
    Step compile = templated(Step{"build", {"build", "{id}", "-j{max_jobs}"}, {}, {}, {}});
    compile.releases_share = true;
    c.steps = {compile, templated(Step{"import", {"import", "{id}"}, {}, {}, {}})};
    cells.push_back(c);
  }
  std::vector<std::string> started;
  sup.on_start = [&](ProcessSupervisor::Id, const ProcessSpec& spec) {
    started.push_back(spec.argv[0] + " " + spec.argv[1] + (spec.argv.size() > 2 ? " " + spec.argv[2] : "") + " with " +
                      std::to_string(sup.running_ids.size()) + " running");
  };
  const RunReport r = run(cells, budget(2, 10));
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  EXPECT_EQ(r.cells[1].result, CellResult::kOk);
  // "build b" started while "import a" ran, with the whole budget.
  EXPECT_THAT(started, ::testing::ElementsAre("build a -j2 with 1 running", "import a with 1 running",
                                              "build b -j2 with 2 running", "import b with 1 running"));
  EXPECT_EQ(sup.running_ids.size(), 0u);
  const std::string log = test::ScratchDir::read(cells[0].log_path);
  EXPECT_THAT(log, HasSubstr("fabuild: step build took "));
}

TEST_F(Runner, AStepThatIsNoTemplateGetsItsArgumentsAsWritten) {
  CellRun c = cell("a");
  const std::string script = "print(f\"torch {version} ({cuda})\"); d = {{}}";
  c.steps = {Step{"check", {"python", "-c", script, "/w/{id}"}, {}, {}, {}}};
  const RunReport r = run({c}, budget(2, 10));
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  ASSERT_EQ(sup.specs.size(), 1u);
  EXPECT_EQ(sup.specs.at(1).argv, (std::vector<std::string>{"python", "-c", script, "/w/{id}"}));
}

TEST_F(Runner, AFailingInlineStepEndsTheCellWithItsMessage) {
  CellRun c = cell("a");
  c.steps = {Step{"build", {"build"}, {}, {}, {}},
             Step{"verify",
                  {},
                  {},
                  {},
                  [](StepContext&) -> StepResult { return fail("METADATA says 2.8.3, the file name 2.8.4"); }},
             Step{"smoke", {"python", "-c", "import x"}, {}, {}, {}}};
  const RunReport r = run({c}, budget(2, 10));
  EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
  EXPECT_EQ(r.cells[0].step, "verify");
  EXPECT_EQ(sup.specs.size(), 1u);  // the smoke test never ran
  EXPECT_FALSE(fs::exists(root / "out" / "a"));
  EXPECT_THAT(printed.str(), HasSubstr("FAILED: [code=1] a (verify: METADATA says 2.8.3, the file name 2.8.4 after"));
}

// What an in-process step's call throws fails the step with its message, and a UserError's
// hint with it: a step need not catch only to say the same.
TEST_F(Runner, AnInlineStepThatThrowsFailsWithTheMessageAndTheHint) {
  CellRun c = cell("a");
  c.steps = {Step{"file", {}, {}, {}, [](StepContext&) -> StepResult {
                    throw UserError(kExitBadConfig, {}, "the wheelhouse is read-only", "make it writable");
                  }}};
  CellRun d = cell("b");
  d.steps = {Step{"file", {}, {}, {}, [](StepContext&) -> StepResult { throw std::runtime_error("disk gone"); }}};
  const RunReport r = run({c, d}, budget(2, 10));
  EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
  EXPECT_EQ(r.cells[1].result, CellResult::kFailed);
  EXPECT_THAT(printed.str(), HasSubstr("a (file: the wheelhouse is read-only; make it writable after"));
  EXPECT_THAT(printed.str(), HasSubstr("b (file: disk gone after"));
}

// A failed step may send its cell back once (CellRun::retry): here the check after the compile
// fails the first time; the cell compiles again (its share taken anew) and ends ok. Asked once: a second failure ends
// it.
TEST_F(Runner, ACellGoesBackOnceToTheStepItsRetryNames) {
  int checks = 0;
  std::vector<std::string> asked;
  const auto with_retry = [&](const std::string& id, int failures) {
    CellRun c = cell(id);
    Step compile = templated(Step{"build", {"build", "{id}", "-j{max_jobs}"}, {}, {}, {}});
    compile.releases_share = true;
    c.steps = {Step{"prepare", {"prep", id}, {}, {}, {}}, compile,
               Step{"archs", {}, {}, {}, [&checks, failures](StepContext&) -> StepResult {
                      if (++checks <= failures) return fail("sm_80 where sm_90 was asked");
                      return {};
                    }}};
    c.retry = [&asked, id](const std::string& step, const std::string& message, Facts&) {
      asked.push_back(id + " " + step + ": " + message);
      return std::string("build");
    };
    return c;
  };
  std::vector<std::string> started;
  sup.on_start = [&](ProcessSupervisor::Id, const ProcessSpec& spec) {
    started.push_back(spec.argv[0] + " " + spec.argv[1] + (spec.argv.size() > 2 ? " " + spec.argv[2] : "") + " with " +
                      std::to_string(sup.running_ids.size()) + " running");
  };
  const RunReport once = run({with_retry("a", 1), cell("b", 5, 1, 0.5)}, budget(2, 10));
  EXPECT_EQ(once.cells[0].result, CellResult::kOk);
  EXPECT_EQ(once.cells[1].result, CellResult::kOk);
  EXPECT_THAT(asked, ::testing::ElementsAre("a archs: sm_80 where sm_90 was asked"));
  // Its share taken anew: one compile at a time fits, and no two ran at once (b ran in the share
  // a gave back, before or after a's second compile: the check runs on a worker thread).
  EXPECT_THAT(started,
              ::testing::UnorderedElementsAre("prep a with 1 running", "build a -j2 with 1 running",
                                              "build a -j2 with 1 running", "build b --jobs=2 with 1 running"));
  EXPECT_THAT(test::ScratchDir::read(with_retry("a", 0).log_path), HasSubstr("fabuild: going back to step build"));
  EXPECT_EQ(sup.running_ids.size(), 0u);

  checks = 0;
  asked.clear();
  const RunReport twice = run({with_retry("c", 2)}, budget(2, 10));
  EXPECT_EQ(twice.cells[0].result, CellResult::kFailed);
  EXPECT_EQ(twice.cells[0].step, "archs");
  EXPECT_EQ(asked.size(), 1u);
}

// A retry that names no step, or one the cell has not been through, ends the cell as failed.
TEST_F(Runner, ARetryThatDeclinesEndsTheCell) {
  sup.failing = {"a"};
  CellRun c = cell("a");
  for (const std::string to : {"", "later"}) {
    c.retry = [to](const std::string&, const std::string&, Facts&) { return to; };
    const RunReport r = run({c}, budget(2, 10));
    EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
    EXPECT_EQ(sup.specs.size(), 1u);
    sup.specs.clear();
  }
}

TEST_F(Runner, AFailingProcessStepNamesTheStep) {
  sup.failing = {"a"};
  CellRun c = cell("a");
  c.steps = {Step{"venv", {"python", "-m", "venv"}, {}, {}, {}}, Step{"build", {"build"}, {}, {}, {}}};
  const RunReport r = run({c}, budget(2, 10));
  EXPECT_EQ(r.cells[0].step, "venv");
  EXPECT_THAT(printed.str(), HasSubstr("(venv: exit 1 after"));
}

TEST_F(Runner, ALauncherStartsProcessStepsElsewhereButNotOnHostOnes) {
  RunSettings settings;
  settings.base_env = Environment::parse(std::vector<std::string>{"PATH=/usr/bin"});
  CellRun c = cell("a");
  Step start{"container", {"start", "--memory={memory_mb}m", "--cpus={cores}"}, {}, {}, {}};
  start.on_host = true;
  start.templated = true;
  c.steps = {start, templated(Step{"build", {"build", "{id}"}, "/src", {{"STEP", "1"}}, {}})};
  std::vector<Launch> seen;
  c.launch = [&](const Launch& l) {
    seen.push_back(l);
    Launch out{{"enter", "--workdir", l.cwd}, l.env, "/"};
    out.argv.insert(out.argv.end(), l.argv.begin(), l.argv.end());
    out.env.emplace_back("ENTERED", "1");
    return out;
  };
  const RunReport r = run({c}, budget(2, 100), settings);
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  ASSERT_EQ(sup.specs.size(), 2u);
  // The container gets the cell's share: 2 jobs x 5 GB, 2 cores.
  const unsigned cores = std::min(2U, std::max(1U, std::thread::hardware_concurrency()));  // never above the machine's
  EXPECT_EQ(sup.specs.at(1).argv,
            (std::vector<std::string>{"start", "--memory=10240m", "--cpus=" + std::to_string(cores)}));
  EXPECT_EQ(env_value(sup.specs.at(1), "ENTERED"), "");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].argv, (std::vector<std::string>{"build", "a"}));
  EXPECT_EQ(seen[0].cwd, "/src");
  const ProcessSpec& build = sup.specs.at(2);
  EXPECT_EQ(build.argv, (std::vector<std::string>{"enter", "--workdir", "/src", "build", "a"}));
  EXPECT_EQ(build.cwd, "/");
  EXPECT_EQ(env_value(build, "ENTERED"), "1");
  EXPECT_EQ(env_value(build, "STEP"), "1");
  EXPECT_EQ(env_value(build, "MAX_JOBS"), "2");
  EXPECT_EQ(env_value(build, "PATH"), "/usr/bin");  // what fabuild passes on still comes first
}

// A cell's cleanup (removing its container) is a process the loop runs like any other, once
// whatever the outcome, before the staging directory goes.
TEST_F(Runner, CleanupRunsOnceWhateverTheOutcome) {
  std::map<std::string, int> cleaned;
  std::vector<std::string> staging_at_cleanup;
  sup.on_start = [&](ProcessSupervisor::Id, const ProcessSpec& spec) {
    if (spec.argv.front() != "rm") return;
    ++cleaned[spec.argv[1]];
    staging_at_cleanup.push_back(fs::exists(root / ".staging" / spec.argv[1]) ? "there" : "gone");
  };
  const auto with_cleanup = [&](CellRun c) {
    c.cleanup = Cleanup{{"rm", c.id}, {"PATH=/usr/bin"}, milliseconds(1000), {}};
    return c;
  };
  sup.failing = {"b"};
  const RunReport r = run({with_cleanup(cell("a")), with_cleanup(cell("b"))}, budget(16, 100));
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  EXPECT_EQ(r.cells[1].result, CellResult::kFailed);
  EXPECT_EQ(cleaned, (std::map<std::string, int>{{"a", 1}, {"b", 1}}));
  EXPECT_THAT(staging_at_cleanup, ::testing::Each("there"));
  EXPECT_TRUE(fs::exists(root / "out" / "a" / "a.whl"));
  EXPECT_FALSE(fs::exists(root / ".staging" / "a"));
  EXPECT_THAT(test::ScratchDir::read(root / "logs" / "a.log"), HasSubstr("fabuild: step cleanup: [rm] [a]"));

  // Cancelled by Ctrl-C: cleaned too; a cell that never started has nothing to clean.
  cleaned.clear();
  sup.failing.clear();
  sup.interrupt_at_wait = {sup.waits + 1};
  const RunReport cancelled = run({with_cleanup(cell("c")), with_cleanup(cell("d"))}, budget(1, 5));
  EXPECT_EQ(cancelled.cells[0].result, CellResult::kCancelled);
  EXPECT_EQ(cancelled.cells[1].result, CellResult::kNotRun);
  EXPECT_EQ(cleaned, (std::map<std::string, int>{{"c", 1}}));
}

TEST_F(Runner, ACleanupThatFailsIsSaidButTheOutcomeStands) {
  CellRun c = cell("a");
  c.cleanup = Cleanup{{"rm", "a"}, {}, milliseconds(1000), [](const ExitStatus& s, const std::string&) -> StepResult {
                        if (s.ok()) return {};
                        return fail("could not remove container fabuild-x-a: engine gone");
                      }};
  sup.failing_programs = {"rm"};
  const RunReport r = run({c}, budget(2, 10));
  EXPECT_EQ(r.cells[0].result, CellResult::kOk);
  EXPECT_THAT(printed.str(), HasSubstr("a: could not remove container fabuild-x-a: engine gone"));
  EXPECT_THAT(test::ScratchDir::read(c.log_path), HasSubstr("fabuild: cleanup: could not remove container"));
}

}  // namespace
}  // namespace fabuild
