// The wheelhouse lock between real processes: a child holds it, the parent is refused with
// exit code 4 and the holder's pid, host and start; a SIGKILLed holder leaves it free at once;
// a waiting taker gets it when the holder lets go.

#include "wheel/wheelhouse_lock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "../support/scratch_dir.h"
#include "util/error.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

class LockTest : public ::testing::Test {
 protected:
  // A child process that takes the lock, says so through a pipe, and holds it until killed.
  pid_t spawn_holder() {
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ready[0]);
      try {
        const WheelhouseLock lock = WheelhouseLock::take(house(), "fabuild holder.yaml", false).value();
        (void)!::write(ready[1], "k", 1);
        for (;;) ::pause();
      } catch (...) {
        ::_exit(3);
      }
    }
    ::close(ready[1]);
    char c = 0;
    EXPECT_EQ(::read(ready[0], &c, 1), 1) << "the holder could not take the lock";
    ::close(ready[0]);
    return pid;
  }

  void kill_and_reap(pid_t pid, int signal) {
    ::kill(pid, signal);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }

  fs::path house() const { return dir.path() / "wh"; }
  test::ScratchDir dir{"fabuild-lock"};
};

TEST_F(LockTest, ASecondTakerIsRefusedNamingTheHolder) {
  const pid_t holder = spawn_holder();
  try {
    static_cast<void>(WheelhouseLock::take(house(), "fabuild second.yaml", false));
    ADD_FAILURE() << "two processes held the lock";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), kExitWheelhouseBusy);
    EXPECT_THAT(e.message(),
                HasSubstr("another fabuild is building into this wheelhouse: pid " + std::to_string(holder)));
    EXPECT_THAT(e.message(), HasSubstr("(fabuild holder.yaml)"));
    EXPECT_THAT(e.message(), HasSubstr(" since 20"));
    EXPECT_THAT(e.hint(), HasSubstr("--wait-lock"));
    EXPECT_EQ(e.where().file, house().string());
  }
  const LockHolder h = read_lock_holder(house());
  EXPECT_EQ(h.pid, holder);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_EQ(h.host, host);
  kill_and_reap(holder, SIGTERM);
}

TEST_F(LockTest, ASigkilledHolderLeavesNoStaleLock) {
  kill_and_reap(spawn_holder(), SIGKILL);
  const WheelhouseLock lock =
      WheelhouseLock::take(house(), "fabuild next.yaml", false).value();  // would throw if it were still held
  EXPECT_EQ(read_lock_holder(house()).pid, ::getpid());
  EXPECT_EQ(read_lock_holder(house()).what, "fabuild next.yaml");
}

TEST_F(LockTest, AWaitingTakerGetsTheLockWhenTheHolderExits) {
  const pid_t holder = spawn_holder();
  std::thread release([&] {
    std::this_thread::sleep_for(500ms);
    kill_and_reap(holder, SIGKILL);
  });
  LockHolder seen;
  const auto start = std::chrono::steady_clock::now();
  {
    const WheelhouseLock lock =
        WheelhouseLock::take(house(), "fabuild waiter.yaml", true, [&](const LockHolder& h) { seen = h; }).value();
    EXPECT_GE(std::chrono::steady_clock::now() - start, 400ms);
    EXPECT_EQ(seen.pid, holder) << "the waiter is told whom it waits for";
  }
  release.join();
}

TEST_F(LockTest, TheLockIsReleasedWithTheObject) {
  { const WheelhouseLock first = WheelhouseLock::take(house(), "a", false).value(); }
  const WheelhouseLock second = WheelhouseLock::take(house(), "b", false).value();
}

}  // namespace
}  // namespace fabuild
