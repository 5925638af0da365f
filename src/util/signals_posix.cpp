#include "util/signals.h"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <system_error>

#include "util/process.h"

namespace fabuild {
namespace {

constexpr int kCaught[4] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};

// Shared by nested instances: a signal is counted once however many are alive.
volatile std::sig_atomic_t g_last_interrupt = 0;
volatile std::sig_atomic_t g_interrupt_count = 0;

void on_interrupt(int signal) {
  g_last_interrupt = signal;
  g_interrupt_count = g_interrupt_count + 1;
}

// Does nothing: its only job is to make ppoll return EINTR when a child exits (SIG_DFL would
// discard SIGCHLD without waking anyone).
void on_child(int) {}

void check(int rc, const char* call) {
  if (rc != 0) throw std::system_error(errno, std::generic_category(), call);
}

}  // namespace

InterruptSignals::InterruptSignals() : count_at_start_(g_interrupt_count) {
  sigset_t caught;
  sigemptyset(&caught);
  for (int signal : kCaught) sigaddset(&caught, signal);
  // pthread_sigmask returns the error instead of setting errno.
  if (int rc = pthread_sigmask(SIG_BLOCK, &caught, &old_mask_); rc != 0)
    throw std::system_error(rc, std::generic_category(), "pthread_sigmask");
  wait_mask_ = old_mask_;
  for (int signal : kCaught) sigdelset(&wait_mask_, signal);

  struct sigaction action = {};
  action.sa_mask = caught;  // one handler at a time, so the count is never torn
  for (int i = 0; i < 4; ++i) {
    action.sa_handler = kCaught[i] == SIGCHLD ? on_child : on_interrupt;
    action.sa_flags = kCaught[i] == SIGCHLD ? SA_NOCLDSTOP : 0;
    check(sigaction(kCaught[i], &action, &old_actions_[i]), "sigaction");
  }
}

InterruptSignals::~InterruptSignals() {
  // Let pending signals reach our handlers first: restoring the old mask would otherwise hand a
  // Ctrl-C that arrived after the last wait to the default action and kill the process mid-cleanup.
  ppoll({}, std::chrono::nanoseconds(0));
  for (int i = 0; i < 4; ++i) sigaction(kCaught[i], &old_actions_[i], nullptr);
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

int InterruptSignals::ppoll(std::span<pollfd> fds, std::chrono::nanoseconds timeout) {
  timespec limit{};
  if (timeout.count() >= 0) {
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
    limit.tv_sec = static_cast<time_t>(seconds.count());
    limit.tv_nsec = static_cast<long>((timeout - seconds).count());
  }
  return ::ppoll(fds.data(), fds.size(), timeout.count() >= 0 ? &limit : nullptr, &wait_mask_);
}

int InterruptSignals::last_signal() const { return count() > 0 ? g_last_interrupt : 0; }

int InterruptSignals::count() const { return g_interrupt_count - count_at_start_; }

void pass_on_interrupt(int signal) { std::raise(signal); }

std::string stop_sequence() { return "SIGTERM, then SIGKILL"; }

std::string signal_name(int signal) {
  static constexpr struct {
    int number;
    const char* name;
  } kNames[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
      {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
      {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
      {SIGCHLD, "SIGCHLD"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
  };
  for (const auto& entry : kNames)
    if (entry.number == signal) return entry.name;
  return fmt::format("signal {}", signal);
}

}  // namespace fabuild
