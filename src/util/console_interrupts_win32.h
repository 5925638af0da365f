#pragma once

// Windows only: what InterruptSignals (signals.h) is on POSIX. For its lifetime, Ctrl-C and
// Ctrl-Break (as SIGINT) and closing the console, logging off or shutting down (as SIGTERM) do
// not end the process: SetConsoleCtrlHandler's handler, which Windows runs on a thread of its
// own, counts them and sets `wake`, the event the supervisor's loop waits on.
//
// Children started with CREATE_NEW_PROCESS_GROUP ignore the console's Ctrl-C, as children in a
// process group of their own miss the terminal's SIGINT on POSIX: fabuild alone decides what
// an interrupt ends. Instances may nest; a Ctrl-C is counted once however many are alive.

#include <windows.h>

namespace fabuild::win32 {

class ConsoleInterrupts {
 public:
  explicit ConsoleInterrupts(HANDLE wake);
  ~ConsoleInterrupts();
  ConsoleInterrupts(const ConsoleInterrupts&) = delete;
  ConsoleInterrupts& operator=(const ConsoleInterrupts&) = delete;

  // The latest since construction (SIGINT or SIGTERM; 0: none) and how many arrived.
  [[nodiscard]] int last_signal() const;
  [[nodiscard]] int count() const;

 private:
  HANDLE wake_;
  int count_at_start_;
};

}  // namespace fabuild::win32
