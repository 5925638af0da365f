#pragma once

// POSIX only: the Windows supervisor learns of Ctrl-C through SetConsoleCtrlHandler instead
// (console_interrupts_win32.h).

#include <poll.h>
#include <signal.h>

#include <chrono>
#include <span>
#include <string>

namespace fabuild {

// For its lifetime, SIGINT, SIGTERM, SIGHUP and SIGCHLD are blocked in the constructing thread and
// caught by handlers that only record them; they get through only inside ppoll() below. Waiting
// for "output, a child's exit, a deadline or Ctrl-C" is then one system call with no window in
// which a signal arrives after the check and before the sleep (ninja's subprocess-posix.cc).
//
// The mask is per thread and inherited by threads created later, so construct this on the thread
// that waits, before starting others; a thread created earlier that leaves these signals unblocked
// can take them instead, and ppoll then only notices at its next deadline. Children started by
// other code meanwhile inherit the blocked mask unless they reset it (ProcessSupervisor does).
// Instances may nest; each restores what it found, and they must be destroyed in reverse order.
class InterruptSignals {
 public:
  InterruptSignals();
  ~InterruptSignals();
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;

  // ::ppoll with the four signals unblocked; `timeout` < 0 waits without limit. Returns what
  // ppoll returns: -1 with errno EINTR when any of them (SIGCHLD included) was handled.
  int ppoll(std::span<pollfd> fds, std::chrono::nanoseconds timeout);

  // The most recent SIGINT/SIGTERM/SIGHUP since construction (0: none), and how many arrived:
  // standard signals do not queue, so several sent while none was let through count once.
  [[nodiscard]] int last_signal() const;
  [[nodiscard]] int count() const;

 private:
  sigset_t old_mask_;
  sigset_t wait_mask_;  // old_mask_ without the four: what ppoll runs under
  struct sigaction old_actions_[4];
  int count_at_start_;
};

}  // namespace fabuild
