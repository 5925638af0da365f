#include "util/signals.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "util/process.h"

// Real signals sent to this test process: while an InterruptSignals exists they must be counted,
// never fatal, and everything must be as before once it is gone.
namespace fabuild {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

void (*handler_of(int signal))(int) {
  struct sigaction action = {};
  sigaction(signal, nullptr, &action);
  return action.sa_handler;
}

bool blocked(int signal) {
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  return sigismember(&mask, signal) == 1;
}

void ignore_signal(int) {}

TEST(InterruptSignalsTest, RestoresTheMaskAndHandlersItFound) {
  struct sigaction custom = {};
  custom.sa_handler = ignore_signal;
  struct sigaction before = {};
  sigaction(SIGHUP, &custom, &before);
  {
    InterruptSignals outer;
    EXPECT_TRUE(blocked(SIGINT) && blocked(SIGTERM) && blocked(SIGHUP) && blocked(SIGCHLD));
    EXPECT_NE(handler_of(SIGHUP), ignore_signal);
    {
      InterruptSignals inner;  // nesting must not lose the outer one's setup
    }
    EXPECT_TRUE(blocked(SIGINT));
    EXPECT_NE(handler_of(SIGINT), SIG_DFL);
  }
  EXPECT_FALSE(blocked(SIGINT) || blocked(SIGTERM) || blocked(SIGHUP) || blocked(SIGCHLD));
  EXPECT_EQ(handler_of(SIGINT), SIG_DFL);
  EXPECT_EQ(handler_of(SIGHUP), ignore_signal);
  sigaction(SIGHUP, &before, nullptr);
}

TEST(InterruptSignalsTest, SignalIsHeldUntilPpollAndThenCounted) {
  InterruptSignals signals;
  raise(SIGINT);
  EXPECT_EQ(signals.count(), 0);  // blocked: nothing can run between a check and the sleep
  EXPECT_EQ(signals.ppoll({}, 10s), -1);
  EXPECT_EQ(errno, EINTR);
  EXPECT_EQ(signals.count(), 1);
  EXPECT_EQ(signals.last_signal(), SIGINT);
  InterruptSignals later;  // counts only what arrives in its own lifetime
  EXPECT_EQ(later.count(), 0);
  EXPECT_EQ(later.last_signal(), 0);
}

TEST(InterruptSignalsTest, SignalPendingAtDestructionDoesNotKillTheProcess) {
  {
    InterruptSignals signals;
    raise(SIGTERM);
  }
  SUCCEED() << "still alive";
}

TEST(InterruptSignalsTest, SignalNames) {
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(77), "signal 77");
}

TEST(SupervisorInterruptTest, SigintWhileWaitingEndsTheWaitWithoutKillingUs) {
  auto supervisor = make_process_supervisor();
  supervisor->start({{"sleep", "1000"}, {"PATH=/usr/bin:/bin"}});
  // A child sends it, so that it arrives while wait() is blocked inside ppoll.
  const std::string script = "sleep 0.2; kill -INT " + std::to_string(getpid()) + "; sleep 1000";
  const auto start = Clock::now();  // before the child's 0.2 s start counting
  supervisor->start({{"/bin/sh", "-c", script}, {"PATH=/usr/bin:/bin"}});
  EXPECT_TRUE(supervisor->wait(10s).empty());
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_GE(Clock::now() - start, 200ms);
  EXPECT_EQ(supervisor->interrupt_signal(), SIGINT);
  EXPECT_EQ(supervisor->interrupt_count(), 1);
  EXPECT_EQ(supervisor->running(), 2u);  // deciding what to do about it is the caller's job
}

TEST(SupervisorInterruptTest, EachInterruptIsCountedSoASecondOneCanEscalate) {
  auto supervisor = make_process_supervisor();
  supervisor->start({{"sleep", "1000"}, {"PATH=/usr/bin:/bin"}});
  EXPECT_EQ(supervisor->interrupt_signal(), 0);
  for (int expected = 1; expected <= 2; ++expected) {
    kill(getpid(), SIGINT);
    const auto start = Clock::now();
    supervisor->wait(10s);
    EXPECT_LT(Clock::now() - start, 1s);
    EXPECT_EQ(supervisor->interrupt_count(), expected);
  }
  kill(getpid(), SIGTERM);
  supervisor->wait(10s);
  EXPECT_EQ(supervisor->interrupt_signal(), SIGTERM);
  EXPECT_EQ(supervisor->interrupt_count(), 3);
}

TEST(SupervisorInterruptTest, InterruptIsCountedEvenWithNothingRunning) {
  auto supervisor = make_process_supervisor();
  kill(getpid(), SIGHUP);
  EXPECT_TRUE(supervisor->wait(10s).empty());
  EXPECT_EQ(supervisor->interrupt_signal(), SIGHUP);
}

// A build must see Ctrl-C and SIGPIPE as if fabuild were not there, whatever fabuild blocks or ignores.
TEST(SupervisorInterruptTest, ChildStartsWithNoSignalBlockedOrIgnored) {
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction before = {};
  sigaction(SIGPIPE, &ignore, &before);
  auto supervisor = make_process_supervisor();
  std::string output;
  supervisor->on_output = [&](ProcessSupervisor::Id, std::string_view chunk) { output += chunk; };
  supervisor->start({{"/bin/sh", "-c", "exec grep -E '^Sig(Blk|Ign)' /proc/self/status"}, {"PATH=/usr/bin:/bin"}});
  sigaction(SIGPIPE, &before, nullptr);
  auto done = supervisor->wait(5s);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].second.ok()) << done[0].second.describe();
  unsigned long long blocked = 0;
  unsigned long long ignored = 0;
  ASSERT_EQ(std::sscanf(output.c_str(), "SigBlk: %llx SigIgn: %llx", &blocked, &ignored), 2) << output;
  EXPECT_EQ(blocked, 0u) << output;
  // Only 1-31: glibc's posix_spawn leaves its internal signals 32 and 33 ignored, beyond our reach.
  EXPECT_EQ(ignored & 0x7fffffffu, 0u) << output;
}

}  // namespace
}  // namespace fabuild
