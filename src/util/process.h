#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabuild {

// How one child process ended. Death by signal stays visible as such instead of becoming a plain
// failure, and maps to 128+N like a shell and ninja do.
struct ExitStatus {
  enum class Kind {
    kExited,       // it exited by itself with `code`
    kSignaled,     // a signal we did not send killed it (a crash, the OOM killer, a user's kill)
    kTimedOut,     // ProcessSpec::timeout expired and we stopped it
    kCancelled,    // cancel_all() stopped it
    kSpawnFailed,  // it never ran; `error` says why
  };
  Kind kind = Kind::kExited;
  // The exit code, when it exited (for kTimedOut/kCancelled: if it exited on SIGTERM). Windows:
  // the whole 32-bit value; a crash there is an exception code such as 0xC0000005 (kSignaled).
  int code = 0;
  int signal = 0;                        // POSIX: the signal that killed it; 0 if it exited (always 0 on Windows)
  std::chrono::milliseconds timeout{0};  // kTimedOut: the limit it ran past
  // kSpawnFailed: the failing call and why, e.g. "posix_spawn(/usr/bin/ninja): Permission denied".
  // Otherwise a note from the supervisor, e.g. that descendants held its output open; usually "".
  std::string error{};
  // Windows: fabuild ended it, its whole Job Object with it (TerminateJobObject: what SIGKILL
  // to its process group is on POSIX); `code` is then the one it was given.
  bool terminated = false;

  // Exited N: N. Killed by signal N: 128+N (kTimedOut and kCancelled too; one that exited 0 on our
  // SIGTERM counts as killed by it, so a stopped process never reads as success). kSpawnFailed: 127.
  [[nodiscard]] int exit_code() const;
  [[nodiscard]] bool ok() const { return kind == Kind::kExited && code == 0; }
  // "exit 1", "killed by SIGKILL (137)", "timed out after 30s, killed by SIGTERM (143)",
  // "cancelled, killed by SIGKILL (137)", "failed to start: posix_spawn(...): ...". Windows:
  // "crashed: exception 0xC0000005", "timed out after 30s, terminated with its job (exit 1)".
  [[nodiscard]] std::string describe() const;
};

struct ProcessSpec {
  // Run directly, never through a shell. argv[0] without a '/' is searched in the PATH of `env`
  // (not of fabuild's own environment); with a '/', a relative one is relative to `cwd`.
  std::vector<std::string> argv{};
  std::vector<std::string> env{};  // the COMPLETE environment as "K=V": nothing is inherited
  std::string cwd{};               // "" = fabuild's own
  // stdout and stderr of the child and its descendants, interleaved as written, appended here
  // (created if missing). "" = not logged; on_output still sees it.
  std::string log_path{};
  // 0 = none. Then SIGTERM to the whole process group (Windows: CTRL_BREAK_EVENT to it)...
  std::chrono::milliseconds timeout{0};
  // ...and SIGKILL to it this much later (Windows: TerminateJobObject).
  std::chrono::milliseconds kill_grace{10000};
};

// Runs many long child processes at once, each in a process group of its own that is killed as a
// whole: a build's compilers die with it.
//
// A child is finished when its leader has exited AND its output pipe reached EOF. When the leader
// exits, whatever is left of its group (`sleep 1000 &`, a stuck compiler) is SIGKILLed at once: a
// cell's leftovers must not outlive it, nor keep its pipe open and the cell "running". Descendants
// that left the group (setsid) cannot be reached; their pipe is given up kill_grace later.
//
// Not thread-safe, but for wake(): construct, use and destroy on one thread. While an instance exists, SIGINT,
// SIGTERM and SIGHUP do not kill the process; they end wait() early and are counted (see
// util/signals.h for what that means for threads). The destructor SIGKILLs and reaps every child
// still running, then restores the signal mask and handlers it found.
class ProcessSupervisor {
 public:
  using Id = std::uint64_t;

  virtual ~ProcessSupervisor() = default;

  // Never throws for a program that cannot start: wait() reports it as kSpawnFailed.
  virtual Id start(const ProcessSpec& spec) = 0;

  // Blocks until at least one child finished, `max_wait` passed (milliseconds::max(): no limit),
  // SIGINT/SIGTERM/SIGHUP arrived or wake() was called, and returns every child finished by then,
  // each exactly once. With nothing running it waits only for wake(), a signal or `max_wait`.
  // Timeouts are enforced only while inside wait().
  virtual std::vector<std::pair<Id, ExitStatus>> wait(std::chrono::milliseconds max_wait) = 0;

  // Makes a wait() in progress, or the next one, return now. The one member any thread may call:
  // work done beside the loop (a wheel verified on a worker thread) says it is done.
  virtual void wake() = 0;

  // SIGTERM to every group now and SIGKILL to what remains `grace` later; they end as kCancelled
  // (a child already past its timeout stays kTimedOut). Calling it again SIGKILLs at once.
  virtual void cancel_all(std::chrono::milliseconds grace) = 0;

  // The same for one child (a step started early whose cell ended first); nothing if it ended.
  virtual void cancel(Id id, std::chrono::milliseconds grace) = 0;

  // Children started whose outcome wait() has not returned yet.
  [[nodiscard]] virtual std::size_t running() const = 0;

  // The latest SIGINT/SIGTERM/SIGHUP received since construction (0: none), and how many: a
  // second Ctrl-C is the user asking to kill now rather than wait for the grace.
  [[nodiscard]] virtual int interrupt_signal() const = 0;
  [[nodiscard]] virtual int interrupt_count() const = 0;

  // Called inside wait() with each chunk a child writes (after it is appended to the log), for
  // streaming with -v and for the last lines of a failed cell. It may call start() and
  // cancel_all(), not wait(); what it throws leaves wait() and the supervisor stays usable.
  std::function<void(Id, std::string_view)> on_output;
};

// This platform's: posix_spawn, process groups and ppoll, ninja's subprocess-posix.cc the model
// (process_posix.cpp); or CreateProcessW with a Job Object per child, Ctrl-C through
// SetConsoleCtrlHandler (process_win32.cpp). Windows has no process groups to signal: a child's
// Job Object is its group, killed as one (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, so also when
// fabuild dies), and Ctrl-C, Ctrl-Break or closing the console count as SIGINT or SIGTERM.
std::unique_ptr<ProcessSupervisor> make_process_supervisor();

// A process's environment ("NAME=value" entries) as one line for the debug log, with the value of
// every variable whose name speaks of a secret (TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL,
// API_KEY, ACCESS_KEY or PRIVATE_KEY, in any case) shown as "***": `-v` output lands in CI logs,
// and the remote cache's bearer token travels in the environment.
std::string environment_for_log(const std::vector<std::string>& env);

// "SIGKILL", or "signal 77" for one without a well-known name.
std::string signal_name(int signal);

// How this platform's supervisor stops a child, for messages: "SIGTERM, then SIGKILL" or
// "Ctrl-Break, then TerminateJobObject".
std::string stop_sequence();

// Hands an interrupt a short-lived supervisor took on to whoever listens next, once that
// supervisor is gone: POSIX raises the signal again; Windows leaves it to a supervisor still
// alive (which counted it too) or, with none, ends the process as Ctrl-C would: exit 128+signal.
void pass_on_interrupt(int signal);

// The running fabuild's own executable (/proc/self/exe resolved; GetModuleFileNameW), to start
// it as a helper process (`fabuild toolkit install`); "" when it cannot be found.
std::string self_executable();

}  // namespace fabuild
