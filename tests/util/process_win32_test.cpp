#include <windows.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "../support/scratch_dir.h"
#include "util/process.h"
#include "util/processes.h"

// Real processes under the Windows supervisor (CreateProcessW, a Job Object each): the helper
// program beside this test (tests/windows/helper.cpp) stands in for a cell's build.
namespace fabuild {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Kind = ExitStatus::Kind;
using Id = ProcessSupervisor::Id;
using ::testing::HasSubstr;

std::string helper() { return (fs::path(self_executable()).parent_path() / "fabuild_test_helper.exe").string(); }

// TerminateJobObject ends a process at once, but its handle signals a moment later.
bool dies_soon(long pid) {
  for (auto until = Clock::now() + 2s; Clock::now() < until; std::this_thread::sleep_for(10ms))
    if (!process_alive(pid)) return true;
  return false;
}

long pid_in(const fs::path& file) {
  for (auto until = Clock::now() + 30s; Clock::now() < until; std::this_thread::sleep_for(10ms)) {
    std::ifstream in(file);
    long pid = 0;
    if (in >> pid) return pid;
  }
  return 0;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

class Win32Process : public ::testing::Test {
 protected:
  void SetUp() override {
    supervisor_->on_output = [this](Id id, std::string_view chunk) { output_[id] += chunk; };
  }

  ProcessSpec spec(std::vector<std::string> args) {
    ProcessSpec s;
    s.argv = {helper()};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.env = {"SystemRoot=C:\\windows"};
    return s;
  }

  // Waits for `id` and returns how it ended; others that end meanwhile are kept for their turn.
  ExitStatus finish(Id id) {
    for (auto until = Clock::now() + 60s; Clock::now() < until;) {
      if (auto it = ended_.find(id); it != ended_.end()) return it->second;
      for (auto& [done, status] : supervisor_->wait(1000ms)) ended_[done] = status;
    }
    ADD_FAILURE() << "process #" << id << " did not finish";
    return {};
  }

  ExitStatus run(std::vector<std::string> args) { return finish(supervisor_->start(spec(std::move(args)))); }

  test::ScratchDir dir_{"fabuild-win32-process"};
  std::unique_ptr<ProcessSupervisor> supervisor_ = make_process_supervisor();
  std::map<Id, std::string> output_;
  std::map<Id, ExitStatus> ended_;
};

TEST_F(Win32Process, ExitCodesAreReportedAsIs) {
  const ExitStatus s = run({"exit", "3"});
  EXPECT_EQ(s.kind, Kind::kExited);
  EXPECT_EQ(s.code, 3);
  EXPECT_EQ(s.exit_code(), 3);
  EXPECT_EQ(s.describe(), "exit 3");
  EXPECT_TRUE(run({"exit", "0"}).ok());
}

TEST_F(Win32Process, ACrashIsACrashNotAnExitCode) {
  const ExitStatus s = run({"crash"});
  EXPECT_EQ(s.kind, Kind::kSignaled);
  EXPECT_EQ(static_cast<unsigned>(s.code), 0xC0000005U);
  EXPECT_EQ(s.describe(), "crashed: exception 0xC0000005");
  EXPECT_FALSE(s.ok());
}

TEST_F(Win32Process, StdoutAndStderrAreAppendedToTheLogAndStreamed) {
  ProcessSpec s = spec({"print", "one", "err:two", "three"});
  s.log_path = (dir_.path() / "cell.log").string();
  std::ofstream(s.log_path, std::ios::binary) << "before\n";
  const Id id = supervisor_->start(s);
  EXPECT_TRUE(finish(id).ok());
  EXPECT_EQ(test::ScratchDir::read(s.log_path), "before\none\ntwo\nthree\n");
  EXPECT_EQ(output_[id], "one\ntwo\nthree\n");
}

TEST_F(Win32Process, AChattyChildIsReadWhileItRuns) {
  ProcessSpec s = spec({"flood", "5000000"});
  s.log_path = (dir_.path() / "flood.log").string();
  const Id id = supervisor_->start(s);
  EXPECT_TRUE(finish(id).ok());
  EXPECT_EQ(output_[id].size(), 5000000U);
  EXPECT_EQ(fs::file_size(s.log_path), 5000000U);
}

TEST_F(Win32Process, EnvironmentIsExactlyWhatWasPassedWithWindowsNames) {
  ProcessSpec s = spec({"env", "FABUILD_X"});
  s.env.push_back("fabuild_x=üñí €");  // Windows names know no case; the value is UTF-8 both ways
  const Id id = supervisor_->start(s);
  ASSERT_TRUE(finish(id).ok());
  EXPECT_EQ(output_[id], "üñí €\n");
  const Id path = supervisor_->start(spec({"env", "PATH"}));
  ASSERT_TRUE(finish(path).ok());
  EXPECT_EQ(output_[path], "<unset>\n");  // nothing fabuild has leaks in
}

TEST_F(Win32Process, ProgramIsSearchedInTheChildsPathWithItsExtensions) {
  ProcessSpec s = spec({"print", "found"});
  s.argv[0] = "fabuild_test_helper";
  s.env.push_back("PATH=C:\\nowhere;" + fs::path(helper()).parent_path().string());
  const Id id = supervisor_->start(s);
  EXPECT_TRUE(finish(id).ok());
  EXPECT_EQ(output_[id], "found\n");
}

TEST_F(Win32Process, ArgumentsReachTheChildAsSingleLiteralWords) {
  const std::vector<std::string> words = {"plain",           "two words", "",        "say \"hi\"", "trailing\\",
                                          "back\\\\\"slash", "%PATH%",    "a&b|c>d", "ünïcödé €",  "tab\there"};
  std::vector<std::string> args = {"args"};
  args.insert(args.end(), words.begin(), words.end());
  const Id id = supervisor_->start(spec(args));
  ASSERT_TRUE(finish(id).ok());
  std::string expected;
  for (const auto& w : words) expected += w + "\n";
  EXPECT_EQ(output_[id], expected);
}

TEST_F(Win32Process, MissingProgramIsASpawnFailureNamingIt) {
  ProcessSpec s = spec({});
  s.argv = {"no-such-program-fabuild"};
  s.env.push_back("PATH=C:\\windows");
  const ExitStatus status = finish(supervisor_->start(s));
  EXPECT_EQ(status.kind, Kind::kSpawnFailed);
  EXPECT_EQ(status.exit_code(), 127);
  EXPECT_THAT(status.describe(), HasSubstr("no-such-program-fabuild: not found (searched PATH=C:\\windows)"));
}

TEST_F(Win32Process, ABatchFileIsRefusedWithTheWayToRunIt) {
  std::ofstream(dir_.path() / "x.bat") << "@echo hi\r\n";
  ProcessSpec s = spec({});
  s.argv = {(dir_.path() / "x.bat").string()};
  const ExitStatus status = finish(supervisor_->start(s));
  EXPECT_EQ(status.kind, Kind::kSpawnFailed);
  EXPECT_THAT(status.describe(), HasSubstr("is a batch file: run it as cmd.exe /d /s /c"));
}

TEST_F(Win32Process, UnopenableLogMeansTheChildNeverRuns) {
  ProcessSpec s = spec({"exit", "0"});
  s.log_path = (dir_.path() / "no" / "such" / "dir" / "x.log").string();
  const ExitStatus status = finish(supervisor_->start(s));
  EXPECT_EQ(status.kind, Kind::kSpawnFailed);
  EXPECT_THAT(status.describe(), HasSubstr("x.log"));
}

TEST_F(Win32Process, TimeoutTerminatesTheJobOfAChildThatIgnoresCtrlBreak) {
  ProcessSpec s = spec({"ignore-break", "60000"});
  s.timeout = 300ms;
  s.kill_grace = 300ms;
  const auto start = Clock::now();
  const ExitStatus status = finish(supervisor_->start(s));
  EXPECT_LT(seconds_since(start), 10.0);
  EXPECT_EQ(status.kind, Kind::kTimedOut);
  EXPECT_TRUE(status.terminated);
  EXPECT_EQ(status.describe(), "timed out after 0.3s, terminated with its job (exit 1)");
  EXPECT_NE(status.exit_code(), 0);
}

TEST_F(Win32Process, TheLeaderExitingTakesWhatItLeftBehindWithIt) {
  const fs::path pid_file = dir_.path() / "child.pid";
  const Id id = supervisor_->start(spec({"leave-child", pid_file.string()}));
  const ExitStatus status = finish(id);
  EXPECT_TRUE(status.ok()) << status.describe();
  const long child = pid_in(pid_file);
  ASSERT_NE(child, 0);
  EXPECT_TRUE(dies_soon(child)) << "the child the cell left, pid " << child << ", outlived it";
}

TEST_F(Win32Process, CancelAllEndsEveryTree) {
  std::vector<Id> ids;
  std::vector<fs::path> files;
  for (int i = 0; i < 3; ++i) {
    files.push_back(dir_.path() / ("child" + std::to_string(i) + ".pid"));
    ids.push_back(supervisor_->start(spec({"leave-child", files.back().string(), "60000"})));
  }
  std::vector<long> children;
  for (const auto& f : files) children.push_back(pid_in(f));
  supervisor_->cancel_all(0ms);
  for (Id id : ids) {
    const ExitStatus s = finish(id);
    EXPECT_EQ(s.kind, Kind::kCancelled);
    EXPECT_THAT(s.describe(), HasSubstr("cancelled, terminated with its job"));
  }
  for (long child : children) {
    ASSERT_NE(child, 0);
    EXPECT_TRUE(dies_soon(child)) << "pid " << child;
  }
}

TEST_F(Win32Process, SecondCancelKillsAtOnce) {
  const Id id = supervisor_->start(spec({"ignore-break", "60000"}));
  supervisor_->wait(200ms);
  supervisor_->cancel_all(60000ms);
  supervisor_->wait(100ms);
  const auto start = Clock::now();
  supervisor_->cancel_all(60000ms);
  const ExitStatus s = finish(id);
  EXPECT_LT(seconds_since(start), 10.0);
  EXPECT_EQ(s.kind, Kind::kCancelled);
}

TEST_F(Win32Process, DestructorLeavesNoProcessBehind) {
  const fs::path pid_file = dir_.path() / "child.pid";
  supervisor_->start(spec({"leave-child", pid_file.string(), "60000"}));
  const long child = pid_in(pid_file);
  ASSERT_NE(child, 0);
  supervisor_.reset();
  EXPECT_TRUE(dies_soon(child));
}

TEST_F(Win32Process, TwentyConcurrentChildrenAreEachReportedOnce) {
  std::map<Id, int> codes;
  for (int i = 0; i < 20; ++i) codes[supervisor_->start(spec({"exit", std::to_string(i)}))] = i;
  std::map<Id, int> seen;
  for (auto until = Clock::now() + 60s; supervisor_->running() > 0 && Clock::now() < until;) {
    for (auto& [id, status] : supervisor_->wait(1000ms)) {
      EXPECT_EQ(seen.count(id), 0U);
      seen[id] = status.code;
    }
  }
  EXPECT_EQ(seen, codes);
}

TEST_F(Win32Process, WakeFromAnotherThreadEndsTheWait) {
  supervisor_->start(spec({"sleep", "5000"}));
  std::thread waker([this] {
    std::this_thread::sleep_for(100ms);
    supervisor_->wake();
  });
  const auto start = Clock::now();
  EXPECT_TRUE(supervisor_->wait(30000ms).empty());
  EXPECT_LT(seconds_since(start), 4.0);
  waker.join();
}

// The console's Ctrl-C, for real: sent to every process on this console, this one included.
// The child, in a process group of its own, ignores it; the supervisor counts it and its wait
// ends, as on POSIX for SIGINT.
TEST_F(Win32Process, CtrlCIsCountedAndEndsTheWaitButNotTheChild) {
  // Run without a terminal (as in CI), Wine gives the test a console no event can be sent on: a
  // console of its own (which its children share) can.
  FreeConsole();
  ASSERT_TRUE(AllocConsole()) << GetLastError();
  const Id id = supervisor_->start(spec({"sleep", "3000"}));
  supervisor_->wait(200ms);
  ASSERT_TRUE(GenerateConsoleCtrlEvent(CTRL_C_EVENT, 0)) << GetLastError();
  std::vector<std::pair<Id, ExitStatus>> done;
  for (auto until = Clock::now() + 2s; supervisor_->interrupt_count() == 0 && Clock::now() < until;)
    done = supervisor_->wait(500ms);
  EXPECT_EQ(supervisor_->interrupt_count(), 1);
  EXPECT_EQ(supervisor_->interrupt_signal(), SIGINT);
  EXPECT_TRUE(done.empty());
  EXPECT_EQ(supervisor_->running(), 1U);
  EXPECT_TRUE(finish(id).ok());
}

}  // namespace
}  // namespace fabuild
