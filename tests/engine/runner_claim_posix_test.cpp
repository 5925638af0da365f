// Cells that make a shared cache entry (EntryClaim) with real processes: a cell waits while
// another process holds the entry's make lock, says once whom it waits for, and then either finds
// the entry made (no step runs) or makes it; a cell that fails holding the claim leaves nothing
// of the entry behind, and one that never got the claim touches nothing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../support/runner_fixture.h"
#include "../support/scratch_dir.h"
#include "engine/runner.h"
#include "util/entry_lock.h"
#include "util/holder_lock.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

class RunnerClaim : public ::testing::Test {
 protected:
  // A cell that makes `entry`: writes a file into it, then its ready marker.
  CellRun maker(const std::string& id, const std::string& make = "mkdir -p \"$E\" && echo made > \"$E/file\"") {
    CellRun c;
    c.id = id;
    c.demand = Demand{1, 1, 1, 1};
    c.log_path = (dir.path() / "logs" / (id + ".log")).string();
    c.staging_dir = (dir.path() / ".staging" / id).string();
    const std::string e = entry().string();
    c.claim = EntryClaim{e, "making the entry for " + id, [e] { return fs::exists(fs::path(e) / "ready"); }};
    c.env = {{"E", e}};
    c.steps = {Step{"make", {"sh", "-c", make}, {}, {}, {}},
               Step{"ready", {"sh", "-c", "echo ok > \"$E/ready\""}, {}, {}, {}}};
    return c;
  }

  RunReport run(const std::vector<CellRun>& cells) { return test::run_for_real(cells, printed, milliseconds(1000)); }

  // Another process that holds the entry's make lock until `then` is done and it lets go.
  pid_t hold_claim(const std::string& then, milliseconds for_how_long) {
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ready[0]);
      auto lock = HolderLock::try_take(entry_make_lock(entry()), "making the entry by hand");
      if (!lock || !*lock) ::_exit(3);
      (void)!::write(ready[1], "k", 1);
      std::this_thread::sleep_for(for_how_long);
      if (!then.empty()) (void)!std::system(then.c_str());
      ::_exit(0);
    }
    ::close(ready[1]);
    char c = 0;
    EXPECT_EQ(::read(ready[0], &c, 1), 1) << "the holder could not take the lock";
    ::close(ready[0]);
    return pid;
  }

  static int reap(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  }

  fs::path entry() const { return dir.path() / "cache" / "env"; }
  test::ScratchDir dir{"fabuild-runner-claim"};
  std::ostringstream printed;
};

TEST_F(RunnerClaim, AnEntryMadeByTheHolderBeforeIsUsedWithNoStepRun) {
  const std::string e = entry().string();
  const pid_t holder =
      hold_claim("mkdir -p " + e + " && echo theirs > " + e + "/file && echo ok > " + e + "/ready", milliseconds(600));
  const auto start = Clock::now();
  const RunReport r = run({maker("env")});
  reap(holder);
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.cells[0].result, CellResult::kOk) << r.cells[0].message;
  EXPECT_GE(Clock::now() - start, milliseconds(500)) << "it did not wait for the holder";
  EXPECT_THAT(printed.str(), HasSubstr("env: waiting for pid " + std::to_string(holder)));
  EXPECT_THAT(printed.str(), HasSubstr("(making the entry by hand)"));
  EXPECT_EQ(test::ScratchDir::read(entry() / "file"), "theirs\n") << "the cell made the entry again";
  EXPECT_THAT(test::ScratchDir::read(r.cells[0].log_path), HasSubstr("was made meanwhile by another process"));
}

TEST_F(RunnerClaim, AHolderThatDiesLeavesTheEntryToBeMadeAgain) {
  // The holder dies without finishing: what it left has no ready marker.
  const std::string e = entry().string();
  const pid_t holder = hold_claim("mkdir -p " + e + " && echo half > " + e + "/half", milliseconds(300));
  const RunReport r = run({maker("env", "rm -rf \"$E\" && mkdir -p \"$E\" && echo made > \"$E/file\"")});
  reap(holder);
  EXPECT_EQ(r.cells[0].result, CellResult::kOk) << r.cells[0].message;
  EXPECT_EQ(test::ScratchDir::read(entry() / "file"), "made\n");
  EXPECT_TRUE(fs::exists(entry() / "ready"));
  EXPECT_FALSE(fs::exists(entry() / "half"));
  // Once the cell is done, the lock is free again.
  const auto lock = HolderLock::try_take(entry_make_lock(entry()), "test");
  ASSERT_TRUE(lock.has_value());
  EXPECT_TRUE(lock->has_value());
}

TEST_F(RunnerClaim, ACellThatFailsHoldingTheClaimLeavesNothingOfTheEntry) {
  const RunReport r = run({maker("env", "mkdir -p \"$E\" && head -c 100000 /dev/zero > \"$E/partial\" && exit 3")});
  EXPECT_EQ(r.cells[0].result, CellResult::kFailed);
  EXPECT_FALSE(fs::exists(entry())) << "a half-made entry was left behind";
}

TEST_F(RunnerClaim, TwoRunsNeedingOneEntryMakeItOnce) {
  // Two processes, each a run of one cell that makes the entry slowly: one makes it, the other
  // waits and uses it.
  const auto child = [&](const std::string& id) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const RunReport r = run({maker(id, "mkdir -p \"$E\" && sleep 0.5 && echo " + id + " >> \"$E/makers\"")});
      ::_exit(r.cells[0].result == CellResult::kOk ? 0 : 1);
    }
    return pid;
  };
  const pid_t a = child("a");
  const pid_t b = child("b");
  const int sa = reap(a);
  const int sb = reap(b);
  EXPECT_TRUE(WIFEXITED(sa) && WEXITSTATUS(sa) == 0);
  EXPECT_TRUE(WIFEXITED(sb) && WEXITSTATUS(sb) == 0);
  const std::string makers = test::ScratchDir::read(entry() / "makers");
  EXPECT_TRUE(makers == "a\n" || makers == "b\n") << "made " << makers;
}

}  // namespace
}  // namespace fabuild
