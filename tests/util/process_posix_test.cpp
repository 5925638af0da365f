#include "util/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

// Real processes throughout: /bin/sh one-liners written here stand in for a cell's build.
namespace fabuild {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Kind = ExitStatus::Kind;
using Id = ProcessSupervisor::Id;

const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin"};

// The process's state letter from /proc, or 0 when it is gone. Zombies count as dead: nothing
// reaps orphans under some containers' PID 1.
char state_of(const std::string& stat_path, pid_t* group = nullptr) {
  std::ifstream file(stat_path);
  std::string line;
  if (!std::getline(file, line) || line.rfind(')') == std::string::npos) return 0;
  std::istringstream rest(line.substr(line.rfind(')') + 1));
  char state = 0;
  pid_t parent = 0;
  pid_t pgrp = 0;
  rest >> state >> parent >> pgrp;
  if (group) *group = pgrp;
  return state == 'Z' || state == 'X' ? 0 : state;
}

bool alive(pid_t pid) { return state_of("/proc/" + std::to_string(pid) + "/stat") != 0; }

bool group_alive(pid_t pgid) {
  DIR* proc = opendir("/proc");
  bool found = false;
  while (dirent* entry = proc ? readdir(proc) : nullptr) {
    pid_t group = 0;
    if (std::isdigit(static_cast<unsigned char>(entry->d_name[0])) &&
        state_of(std::string("/proc/") + entry->d_name + "/stat", &group) && group == pgid)
      found = true;
  }
  if (proc) closedir(proc);
  return found;
}

// SIGKILL is delivered asynchronously; give the kernel a moment before calling a process a survivor.
bool dies_soon(const std::function<bool()>& still_there) {
  for (auto until = Clock::now() + 1s; Clock::now() < until; std::this_thread::sleep_for(5ms))
    if (!still_there()) return true;
  return false;
}

// "label 1234" somewhere in `text`.
pid_t pid_after(const std::string& text, const std::string& label) {
  auto at = text.find(label + " ");
  return at == std::string::npos ? 0 : std::stoi(text.substr(at + label.size() + 1));
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("fabuild-process-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    supervisor_->on_output = [this](Id id, std::string_view chunk) { output_[id] += chunk; };
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static ProcessSpec sh(const std::string& script) { return {{"/bin/sh", "-c", script}, kEnv}; }

  // One wait(); each id must be reported exactly once over the test.
  void collect(std::chrono::milliseconds max_wait) {
    for (auto& [id, status] : supervisor_->wait(max_wait)) {
      EXPECT_FALSE(done_.contains(id)) << "process " << id << " reported twice";
      done_[id] = status;
    }
  }

  ExitStatus finish(Id id, std::chrono::milliseconds limit = 5s) {
    for (auto until = Clock::now() + limit; !done_.contains(id) && Clock::now() < until;)
      collect(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()));
    if (!done_.contains(id)) ADD_FAILURE() << "process " << id << " still running after " << limit.count() << "ms";
    return done_[id];
  }

  ExitStatus run(const ProcessSpec& spec) { return finish(supervisor_->start(spec)); }

  void wait_for_text(Id id, const std::string& text) {
    for (auto until = Clock::now() + 3s; output_[id].find(text) == std::string::npos && Clock::now() < until;)
      collect(50ms);
    ASSERT_NE(output_[id].find(text), std::string::npos) << output_[id];
    ASSERT_FALSE(done_.contains(id)) << done_[id].describe();
  }

  std::filesystem::path dir_;
  std::unique_ptr<ProcessSupervisor> supervisor_ = make_process_supervisor();
  std::map<Id, std::string> output_;
  std::map<Id, ExitStatus> done_;
};

TEST_F(ProcessTest, ExitCodesAreReportedAsIs) {
  for (int code : {0, 1, 42}) {
    ExitStatus status = run(sh("exit " + std::to_string(code)));
    EXPECT_EQ(status.kind, Kind::kExited);
    EXPECT_EQ(status.exit_code(), code);
    EXPECT_EQ(status.ok(), code == 0);
    EXPECT_EQ(status.describe(), "exit " + std::to_string(code));
  }
}

TEST_F(ProcessTest, DeathBySignalIs128PlusTheSignal) {
  ExitStatus killed = run(sh("kill -KILL $$"));
  EXPECT_EQ(killed.kind, Kind::kSignaled);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_EQ(killed.exit_code(), 137);
  EXPECT_EQ(killed.describe(), "killed by SIGKILL (137)");
  ExitStatus crashed = run(sh("ulimit -c 0; kill -SEGV $$"));
  EXPECT_EQ(crashed.kind, Kind::kSignaled);
  EXPECT_EQ(crashed.exit_code(), 139);
  EXPECT_FALSE(crashed.ok());
}

TEST_F(ProcessTest, StdoutAndStderrAreAppendedToTheLogAndStreamedInOrder) {
  const auto log = dir_ / "cell.log";
  std::ofstream(log) << "earlier run\n";
  ProcessSpec spec = sh("echo out1; echo err1 >&2; echo out2; echo err2 >&2");
  spec.log_path = log.string();
  const Id id = supervisor_->start(spec);
  EXPECT_TRUE(finish(id).ok());
  std::stringstream logged;
  logged << std::ifstream(log).rdbuf();
  EXPECT_EQ(logged.str(), "earlier run\nout1\nerr1\nout2\nerr2\n");
  EXPECT_EQ(output_[id], "out1\nerr1\nout2\nerr2\n");
}

TEST_F(ProcessTest, UnopenableLogMeansTheChildNeverRuns) {
  ProcessSpec spec = sh("touch ran");
  spec.cwd = dir_.string();
  spec.log_path = (dir_ / "no-such-dir" / "cell.log").string();
  ExitStatus status = run(spec);
  EXPECT_EQ(status.kind, Kind::kSpawnFailed);
  EXPECT_NE(status.error.find("open(" + spec.log_path + "): No such file or directory"), std::string::npos)
      << status.error;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ran"));
}

TEST_F(ProcessTest, EnvironmentIsExactlyWhatWasPassed) {
  setenv("FABUILD_PARENT_ONLY", "must not leak", 1);
  const Id id = supervisor_->start({{"env"}, {"PATH=/usr/bin:/bin", "CELL=a b=c"}});
  unsetenv("FABUILD_PARENT_ONLY");
  EXPECT_TRUE(finish(id).ok());
  EXPECT_EQ(output_[id], "PATH=/usr/bin:/bin\nCELL=a b=c\n");
}

TEST_F(ProcessTest, ProgramIsSearchedInTheChildsPathNotOurs) {
  std::filesystem::create_directories(dir_ / "bin");
  const auto tool = dir_ / "bin" / "fabuild-test-tool";
  std::ofstream(tool) << "#!/bin/sh\necho \"tool ran with $1\"\n";
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  const Id id = supervisor_->start({{"fabuild-test-tool", "x"}, {"PATH=" + (dir_ / "bin").string() + ":/bin"}});
  EXPECT_TRUE(finish(id).ok()) << done_[id].describe();
  EXPECT_EQ(output_[id], "tool ran with x\n");
}

TEST_F(ProcessTest, ArgumentsReachTheChildAsSingleLiteralWords) {
  const std::vector<std::string> words = {"two words",      "\"double\"", "'single'", "$(touch pwned)",
                                          "a;touch pwned2", "*",          "",         "back\\slash"};
  ProcessSpec spec = sh("printf '[%s]\\n' \"$@\"");
  spec.argv.push_back("sh");  // $0
  spec.argv.insert(spec.argv.end(), words.begin(), words.end());
  spec.cwd = dir_.string();
  const Id id = supervisor_->start(spec);
  EXPECT_TRUE(finish(id).ok());
  std::string expected;
  for (const auto& word : words) expected += "[" + word + "]\n";
  EXPECT_EQ(output_[id], expected);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "pwned"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "pwned2"));
}

TEST_F(ProcessTest, MissingProgramIsASpawnFailureNamingIt) {
  const auto start = Clock::now();
  ExitStatus status = run({{"fabuild-no-such-program", "--version"}, kEnv});
  EXPECT_LT(seconds_since(start), 1.0);
  EXPECT_EQ(status.kind, Kind::kSpawnFailed);
  EXPECT_EQ(status.exit_code(), 127);
  EXPECT_EQ(status.error, "fabuild-no-such-program: No such file or directory (searched PATH=/usr/bin:/bin)");
  EXPECT_EQ(status.describe(), "failed to start: " + status.error);

  ExitStatus absolute = run({{"/nonexistent/bin/ninja"}, kEnv});
  EXPECT_EQ(absolute.kind, Kind::kSpawnFailed);
  EXPECT_EQ(absolute.error, "posix_spawn(/nonexistent/bin/ninja): No such file or directory");

  const auto plain_file = dir_ / "not-executable";
  std::ofstream(plain_file) << "echo hi\n";
  ExitStatus denied = run({{plain_file.string()}, kEnv});
  EXPECT_EQ(denied.kind, Kind::kSpawnFailed);
  EXPECT_NE(denied.error.find("Permission denied"), std::string::npos) << denied.error;

  EXPECT_EQ(run({{}, kEnv}).kind, Kind::kSpawnFailed);
  EXPECT_EQ(supervisor_->running(), 0u);
}

TEST_F(ProcessTest, StdinIsDevNull) {
  ProcessSpec spec{{"cat"}, kEnv};
  spec.timeout = 5s;  // a cat reading our stdin would hang: fail as a timeout instead
  const auto start = Clock::now();
  EXPECT_TRUE(run(spec).ok());
  EXPECT_LT(seconds_since(start), 2.0);
}

TEST_F(ProcessTest, OnlyStdioIsInherited) {
  const int stray = dup2(open("/dev/null", O_RDONLY), 57);  // no O_CLOEXEC, as careless code would
  ASSERT_EQ(stray, 57);
  supervisor_->start({{"sleep", "1000"}, kEnv});                 // its pipe is open while the next one starts
  const Id id = supervisor_->start(sh("ls /proc/$$/fd; true"));  // true: no exec, $$ stays sh
  EXPECT_TRUE(finish(id).ok());
  EXPECT_EQ(output_[id], "0\n1\n2\n");
  close(stray);
}

TEST_F(ProcessTest, TimeoutStopsACooperativeChildWithSigterm) {
  ProcessSpec spec{{"sleep", "1000"}, kEnv};
  spec.timeout = 200ms;
  spec.kill_grace = 5s;
  const auto start = Clock::now();
  ExitStatus status = run(spec);
  EXPECT_GE(seconds_since(start), 0.2);
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_EQ(status.kind, Kind::kTimedOut);
  EXPECT_EQ(status.signal, SIGTERM);
  EXPECT_EQ(status.exit_code(), 143);
  EXPECT_EQ(status.describe(), "timed out after 0.2s, killed by SIGTERM (143)");
}

TEST_F(ProcessTest, ChildIgnoringSigtermIsKilledAfterTheGrace) {
  ProcessSpec spec = sh("trap '' TERM; sleep 1000");
  spec.timeout = 200ms;
  spec.kill_grace = 300ms;
  const auto start = Clock::now();
  ExitStatus status = run(spec);
  EXPECT_GE(seconds_since(start), 0.5);
  EXPECT_LT(seconds_since(start), 2.5);
  EXPECT_EQ(status.kind, Kind::kTimedOut);
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_EQ(status.exit_code(), 137);
}

// The grandchild ignores SIGTERM and holds the pipe: the leader's death must not leave it behind,
// nor leave the cell waiting for EOF until the grace runs out.
TEST_F(ProcessTest, TimeoutLeavesNoProcessOfTheGroup) {
  ProcessSpec spec = sh("(trap '' TERM; exec sleep 1000) & echo \"grandchild $!\"; echo \"leader $$\"; wait");
  spec.timeout = 200ms;
  spec.kill_grace = 5s;
  const auto start = Clock::now();
  const Id id = supervisor_->start(spec);
  ExitStatus status = finish(id);
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_EQ(status.kind, Kind::kTimedOut);
  EXPECT_EQ(status.signal, SIGTERM);
  const pid_t leader = pid_after(output_[id], "leader");
  const pid_t grandchild = pid_after(output_[id], "grandchild");
  ASSERT_GT(leader, 0) << output_[id];
  ASSERT_GT(grandchild, 0) << output_[id];
  EXPECT_TRUE(dies_soon([&] { return alive(grandchild); }));
  EXPECT_TRUE(dies_soon([&] { return group_alive(leader); }));
}

TEST_F(ProcessTest, LeaderExitKillsLeftoversThatHoldThePipe) {
  const auto start = Clock::now();
  const Id id = supervisor_->start(sh("sleep 1000 & echo \"grandchild $!\"; exit 3"));
  ExitStatus status = finish(id);
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_EQ(status.kind, Kind::kExited);
  EXPECT_EQ(status.code, 3);
  EXPECT_TRUE(dies_soon([&] { return alive(pid_after(output_[id], "grandchild")); }));
}

TEST_F(ProcessTest, LeaderExitKillsDetachedLeftovers) {
  const Id id = supervisor_->start(sh("sleep 1000 >/dev/null 2>&1 & echo \"grandchild $!\"; echo \"leader $$\""));
  EXPECT_TRUE(finish(id).ok());
  const pid_t grandchild = pid_after(output_[id], "grandchild");
  ASSERT_GT(grandchild, 0) << output_[id];
  EXPECT_TRUE(dies_soon([&] { return alive(grandchild); }));
  EXPECT_TRUE(dies_soon([&] { return group_alive(pid_after(output_[id], "leader")); }));
}

// setsid puts it out of our reach; the cell must still end, kill_grace after its leader.
TEST_F(ProcessTest, PipeHeldByAnEscapedDescendantIsGivenUp) {
  if (access("/usr/bin/setsid", X_OK) != 0) GTEST_SKIP() << "no setsid(1)";
  // The leader waits for the escape: killing its group earlier would catch the child in time.
  ProcessSpec spec =
      sh("setsid sh -c 'echo \"escaped $$\" >pid; exec sleep 1000' &"
         "while [ ! -s pid ]; do sleep 0.01; done; cat pid");
  spec.cwd = dir_.string();
  spec.kill_grace = 300ms;
  const auto start = Clock::now();
  const Id id = supervisor_->start(spec);
  ExitStatus status = finish(id);
  EXPECT_GE(seconds_since(start), 0.3);
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_EQ(status.kind, Kind::kExited);
  EXPECT_NE(status.error.find("held its output open"), std::string::npos) << status.describe();
  if (pid_t escaped = pid_after(output_[id], "escaped"); escaped > 0) kill(escaped, SIGKILL);
}

TEST_F(ProcessTest, CancelAllStopsEveryGroup) {
  std::vector<Id> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(supervisor_->start(sh("sleep 1000 & echo \"leader $$\"; wait")));
  ids.push_back(supervisor_->start(sh("trap '' TERM; echo \"leader $$\"; sleep 1000")));
  for (Id id : ids) wait_for_text(id, "leader");
  const auto start = Clock::now();
  supervisor_->cancel_all(300ms);
  for (Id id : ids) {
    ExitStatus status = finish(id);
    EXPECT_EQ(status.kind, Kind::kCancelled);
    EXPECT_EQ(status.signal, id == ids.back() ? SIGKILL : SIGTERM) << status.describe();
    EXPECT_TRUE(dies_soon([&] { return group_alive(pid_after(output_[id], "leader")); }));
  }
  EXPECT_GE(seconds_since(start), 0.3);
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_EQ(supervisor_->running(), 0u);
}

TEST_F(ProcessTest, SecondCancelKillsAtOnce) {
  const Id id = supervisor_->start(sh("trap '' TERM; echo ready; sleep 1000"));
  wait_for_text(id, "ready");
  supervisor_->cancel_all(10s);
  collect(200ms);
  ASSERT_FALSE(done_.contains(id)) << "SIGTERM should have been ignored";
  const auto start = Clock::now();
  supervisor_->cancel_all(10s);
  ExitStatus status = finish(id);
  EXPECT_LT(seconds_since(start), 1.0);
  EXPECT_EQ(status.kind, Kind::kCancelled);
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_EQ(status.describe(), "cancelled, killed by SIGKILL (137)");
}

TEST_F(ProcessTest, DestructorLeavesNoChildBehind) {
  const Id id = supervisor_->start(sh("sleep 1000 & echo \"grandchild $!\"; echo \"leader $$\"; wait"));
  wait_for_text(id, "leader");
  const pid_t leader = pid_after(output_[id], "leader");
  const pid_t grandchild = pid_after(output_[id], "grandchild");
  supervisor_.reset();
  EXPECT_FALSE(alive(leader));  // killed and reaped before the destructor returned
  EXPECT_TRUE(dies_soon([&] { return alive(grandchild); }));
  EXPECT_TRUE(dies_soon([&] { return group_alive(leader); }));
}

TEST_F(ProcessTest, TwentyConcurrentChildrenAreEachReportedOnce) {
  std::map<Id, int> index;
  for (int i = 0; i < 20; ++i) {
    ProcessSpec spec = sh("sleep 0.$1; echo \"child $2\"; exit $2");
    spec.argv.insert(spec.argv.end(), {"sh", std::to_string(i % 5), std::to_string(i)});
    index[supervisor_->start(spec)] = i;
  }
  EXPECT_EQ(supervisor_->running(), 20u);
  for (auto until = Clock::now() + 5s; supervisor_->running() > 0 && Clock::now() < until;) collect(1s);
  ASSERT_EQ(done_.size(), 20u);
  for (const auto& [id, i] : index) {
    EXPECT_EQ(done_[id].exit_code(), i);
    EXPECT_EQ(output_[id], "child " + std::to_string(i) + "\n");
  }
}

TEST(ExitStatusTest, StoppedChildThatExitedZeroIsNotASuccess) {
  ExitStatus status{ExitStatus::Kind::kTimedOut, 0, 0, 30s, ""};
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.exit_code(), 143);
  EXPECT_EQ(status.describe(), "timed out after 30s, exit 0");
}

}  // namespace
}  // namespace fabuild
