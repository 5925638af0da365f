// The engine end to end: the real fabuild binary runs matrices whose cells are real commands,
// and is signalled like a person or a CI runner would.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <csignal>
#include <thread>

#include "../support/scratch_dir.h"
#include "run_binary.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::run_fabuild;
using ::testing::HasSubstr;
using ::testing::Not;

// A process that exists and is not a zombie.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.empty()) return false;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

class Build : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("fabuild-build-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir / "pids");
  }
  void TearDown() override {
    for (pid_t pid : pids()) kill(pid, SIGKILL);
    fs::remove_all(dir);
  }

  // Two cells (python cp311, cp312), one arch each, the given command and extra matrix text.
  std::string matrix(const std::string& command, const std::string& extra = "") {
    const std::string path = (dir / "m.yaml").string();
    std::ofstream(path) << "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp311, cp312]\n"
                           "archs: \"90\"\nbudget: {cores: 8, memory_gb: 40, reserve_gb: 0}\n"
                           "command: "
                        << command << "\n"
                        << extra;
    return path;
  }

  // Every pid the cells wrote into pids/.
  std::vector<pid_t> pids() {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(dir / "pids", ec)) {
      std::ifstream in(f.path());
      for (pid_t p; in >> p;) out.push_back(p);
    }
    return out;
  }

  // Waits until `n` pid lines were written (the cells are running).
  bool wait_for_pids(std::size_t n) {
    for (int i = 0; i < 500; ++i) {
      if (pids().size() >= n) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  // A cell that records its shell's pid and a grandchild's, writes a partial output, then waits.
  std::string long_cell(const std::string& prelude = "") {
    return "[sh, -c, '" + prelude + "echo $$ > " + (dir / "pids").string() + "/{id}; sleep 1000 & echo $! >> " +
           (dir / "pids").string() + "/{id}; echo partial > \"$FABUILD_OUT_DIR/partial.whl\"; wait']";
  }

  test::ScratchDir scratch{"fabuild-build"};
  fs::path dir = scratch.path();
};

TEST_F(Build, CellsRunInParallelAndFileTheirOutputs) {
  // Each cell writes when it started and ended (date +%s.%N); two cells run at once when each
  // started before the other ended. The cells' own times, not the run's, so that a loaded
  // machine (a sanitizer build beside other jobs) cannot make the test fail.
  const auto m = matrix(
      "[sh, -c, 'date +%s.%N > {out}/{id}.times; sleep 1; date +%s.%N >> {out}/{id}.times; "
      "echo \"{id} jobs=$MAX_JOBS\" > {out}/{id}.txt']");
  const fs::path out = dir / "wheelhouse/fa2.8.3/torch2.8/cu128";
  const auto intervals = [&] {
    std::vector<std::pair<double, double>> spans;
    for (const char* py : {"cp311", "cp312"}) {
      std::ifstream in(out / fmt::format("fa2.8.3-torch2.8-cu128-{}-linux_x86_64.times", py));
      double start = 0, end = 0;
      in >> start >> end;
      spans.emplace_back(start, end);
    }
    return spans;
  };
  const auto r = run_fabuild({m}, dir.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto together = intervals();
  EXPECT_LT(together[0].first, together[1].second);  // two one-second cells at once
  EXPECT_LT(together[1].first, together[0].second);
  EXPECT_EQ(test::slurp(out / "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64.txt"),
            "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64 jobs=4\n");
  EXPECT_TRUE(fs::exists(out / "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64.txt"));
  EXPECT_THAT(r.out, HasSubstr("2 ok in 0:0"));
  EXPECT_FALSE(fs::exists(dir / "wheelhouse/.staging/fa2.8.3-torch2.8-cu128-cp311-linux_x86_64"));

  const auto serial = run_fabuild({m, "-j", "1", "--force"}, dir.string());
  ASSERT_EQ(serial.code, 0) << serial.out;
  const auto apart = intervals();
  EXPECT_TRUE(apart[0].second <= apart[1].first || apart[1].second <= apart[0].first)  // one after the other
      << apart[0].first << "-" << apart[0].second << " and " << apart[1].first << "-" << apart[1].second;
  EXPECT_THAT(serial.out, HasSubstr("MAX_JOBS=8"));  // one cell at a time gets the whole budget
}

TEST_F(Build, FailedCellShowsItsLastLinesAndTheOthersGoOn) {
  const auto m =
      matrix("[sh, -c, 'echo ok > {out}/{id}.txt']",
             "include:\n  - {python: cp311, command: [sh, -c, 'echo compiling; echo \"error: boom\" >&2; exit 3']}\n");
  const auto r = run_fabuild({m}, dir.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("FAILED: [code=3] fa2.8.3-torch2.8-cu128-cp311-linux_x86_64 (exit 3 after 0:00)\n"));
  EXPECT_THAT(r.out, HasSubstr("  | compiling\n  | error: boom\n"));
  EXPECT_THAT(r.out, HasSubstr("  log: wheelhouse/logs/fa2.8.3-torch2.8-cu128-cp311-linux_x86_64.log"));
  EXPECT_THAT(r.out, HasSubstr("1 ok, 1 FAILED"));
  EXPECT_TRUE(fs::exists(dir / "wheelhouse/fa2.8.3/torch2.8/cu128/fa2.8.3-torch2.8-cu128-cp312-linux_x86_64.txt"));
  EXPECT_THAT(test::slurp(dir / "wheelhouse/logs/fa2.8.3-torch2.8-cu128-cp311-linux_x86_64.log"),
              HasSubstr("error: boom"));
}

TEST_F(Build, ExitStatusOfASignalledCellIs128PlusN) {
  const auto r = run_fabuild({matrix("[sh, -c, 'kill -SEGV $$']"), "--python", "cp312"}, dir.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("FAILED: [code=139]"));
  EXPECT_THAT(r.out, HasSubstr("SIGSEGV"));
}

TEST_F(Build, TimeoutTermsThenKillsTheWholeGroup) {
  const auto m = matrix(long_cell("trap \"\" TERM; "), "build: {timeout: 1s, kill_grace: 1s}\n");
  const auto started = std::chrono::steady_clock::now();
  const auto r = run_fabuild({m, "--python", "cp312"}, dir.string());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("timed out after 1s"));
  EXPECT_THAT(r.out, HasSubstr("SIGKILL"));
  EXPECT_THAT(r.out, HasSubstr("1 TIMEOUT"));
  ASSERT_EQ(pids().size(), 2u);
  for (pid_t p : pids()) EXPECT_FALSE(alive(p)) << p;
  EXPECT_FALSE(fs::exists(dir / "wheelhouse/fa2.8.3"));  // the partial output was not filed
}

TEST_F(Build, CtrlCStopsEveryCellAndExits130) {
  const auto bg = test::spawn_fabuild({matrix(long_cell())}, dir.string());
  ASSERT_TRUE(wait_for_pids(4));
  kill(bg.pid, SIGINT);
  const auto r = test::wait_fabuild(bg, 15s);
  EXPECT_EQ(r.code, 130) << r.out << r.err;
  for (pid_t p : pids()) EXPECT_FALSE(alive(p)) << "survivor " << p;
  EXPECT_THAT(r.out, HasSubstr("interrupted: stopping 2 running cells"));
  EXPECT_THAT(r.out, HasSubstr("2 cancelled"));
  EXPECT_FALSE(fs::exists(dir / "wheelhouse/fa2.8.3"));  // no partial output filed
  EXPECT_FALSE(fs::exists(dir / "wheelhouse/.staging/fa2.8.3-torch2.8-cu128-cp311-linux_x86_64"));
}

TEST_F(Build, SigtermExits143) {
  const auto bg = test::spawn_fabuild({matrix(long_cell())}, dir.string());
  ASSERT_TRUE(wait_for_pids(4));
  kill(bg.pid, SIGTERM);
  const auto r = test::wait_fabuild(bg, 15s);
  EXPECT_EQ(r.code, 143) << r.out << r.err;
  for (pid_t p : pids()) EXPECT_FALSE(alive(p)) << "survivor " << p;
}

TEST_F(Build, SecondCtrlCKillsAtOnce) {
  // The cells ignore SIGTERM and the grace is long: only the second Ctrl-C ends them soon.
  const auto bg =
      test::spawn_fabuild({matrix(long_cell("trap \"\" TERM; "), "build: {kill_grace: 60s}\n")}, dir.string());
  ASSERT_TRUE(wait_for_pids(4));
  kill(bg.pid, SIGINT);
  std::this_thread::sleep_for(300ms);
  for (pid_t p : pids()) EXPECT_TRUE(alive(p)) << "ended before the grace " << p;
  kill(bg.pid, SIGINT);
  const auto started = std::chrono::steady_clock::now();
  const auto r = test::wait_fabuild(bg, 15s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_EQ(r.code, 130) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("interrupted again: killing every cell now"));
  for (pid_t p : pids()) EXPECT_FALSE(alive(p)) << "survivor " << p;
}

TEST_F(Build, EnvironmentIsExplicitAndArgumentsAreNeverShellText) {
  const std::string probe = (dir / "probe").string();
  const auto m = matrix("[sh, -c, 'env > " + probe + ".env; printf \"[%s]\\n\" \"$@\" > " + probe + ".args; cat > " +
                        probe + ".stdin', sh, '$(touch " + (dir / "pwned").string() + ")', 'a b;c', '{python}']");
  const auto bg = test::spawn_fabuild({m, "--python", "cp312"}, dir.string(), {"FABUILD_TEST_SECRET=leak"});
  const auto r = test::wait_fabuild(bg, 15s);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::string env = test::slurp(probe + ".env");
  EXPECT_THAT(env, Not(HasSubstr("FABUILD_TEST_SECRET")));
  EXPECT_THAT(env, HasSubstr("\nPATH="));
  EXPECT_THAT(env, HasSubstr("FLASH_ATTN_CUDA_ARCHS=90\n"));
  EXPECT_THAT(env, HasSubstr("FLASH_ATTN_LOCAL_VERSION=cu128torch2.8cxx11abiTRUE\n"));
  EXPECT_THAT(env, HasSubstr("FLASH_ATTENTION_FORCE_BUILD=TRUE\n"));
  EXPECT_EQ(test::slurp(probe + ".args"), "[$(touch " + (dir / "pwned").string() + ")]\n[a b;c]\n[cp312]\n");
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  EXPECT_EQ(test::slurp(probe + ".stdin"), "");  // stdin is /dev/null: cat ended at once
}

TEST_F(Build, VerboseStreamsCellOutput) {
  const auto r =
      run_fabuild({matrix("[sh, -c, 'echo hello from {python}; echo bye']"), "-v", "--python", "cp311"}, dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("[fa2.8.3-torch2.8-cu128-cp311-linux_x86_64] hello from cp311\n"));
  EXPECT_THAT(r.out, HasSubstr("[fa2.8.3-torch2.8-cu128-cp311-linux_x86_64] bye\n"));
}

TEST_F(Build, FailFastStopsTheOtherCells) {
  const auto m = matrix(long_cell(), "include:\n  - {python: cp311, command: [sh, -c, 'sleep 0.5; exit 2']}\n");
  const auto r = run_fabuild({m, "--fail-fast"}, dir.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "--fail-fast: fa2.8.3-torch2.8-cu128-cp311-linux_x86_64 failed; starting no more cells, stopping 1 running"));
  EXPECT_THAT(r.out, HasSubstr("1 FAILED, 1 cancelled"));
  for (pid_t p : pids()) EXPECT_FALSE(alive(p)) << "survivor " << p;
}

}  // namespace
}  // namespace fabuild

namespace fabuild {
namespace {

// Cells that really take memory in proportion to their MAX_JOBS, as compile jobs do: what the
// processes hold at once, sampled from /proc, stays inside the memory budget.
TEST_F(Build, RealMemoryStaysInsideTheBudget) {
  const std::string pids_dir = (dir / "pids").string();
  std::ofstream(dir / "m.yaml")
      << "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp310, cp311, cp312, cp313]\n"
         "archs: \"90\"\nbudget: {cores: 16, memory_gb: 0.5, reserve_gb: 0}\n"
         "build: {memory_per_thread_gb: 0.06}\n"
         "command: [python3, -c, 'import os, time; open(\""
      << pids_dir
      << "/{id}\", \"w\").write(str(os.getpid())); "
         "b = bytearray(int({max_jobs}) * 60 * 1024 * 1024); b[::4096] = b\"x\" * len(b[::4096]); time.sleep(1.5)']\n";
  const auto bg = test::spawn_fabuild({(dir / "m.yaml").string()}, dir.string());
  double peak_mb = 0;
  int status = 0;
  while (waitpid(bg.pid, &status, WNOHANG) == 0) {
    double mb = 0;
    for (pid_t p : pids()) {
      std::ifstream in("/proc/" + std::to_string(p) + "/status");
      for (std::string line; std::getline(in, line);) {
        if (line.rfind("VmRSS:", 0) == 0) mb += std::stod(line.substr(6)) / 1024.0;
      }
    }
    peak_mb = std::max(peak_mb, mb);
    std::this_thread::sleep_for(10ms);
  }
  const std::string out = test::slurp(bg.out);
  fs::remove_all(bg.out.parent_path());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_THAT(out, HasSubstr("MAX_JOBS=4"));
  // Two cells at once with 4 x 60 MB each (plus Python's own ~10 MB): more than one cell's
  // worth, never more than the 512 MB budget and the interpreters.
  EXPECT_GT(peak_mb, 300);
  EXPECT_LT(peak_mb, 512 + 2 * 15);
}

}  // namespace
}  // namespace fabuild
