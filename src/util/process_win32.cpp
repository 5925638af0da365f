#include <fmt/format.h>
#include <spdlog/spdlog.h>
#ifdef __MINGW32__
#include <pthread.h>
#endif

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "util/child_timing.h"
#include "util/console_interrupts_win32.h"
#include "util/process.h"
#include "util/spawn_win32.h"
#include "util/text.h"
#include "util/windows_api.h"

// The Windows supervisor: the POSIX one's contract (process.h) with Windows' parts. A child's
// Job Object stands for its process group; a thread per output pipe reads what it writes
// (anonymous pipes have no non-blocking reads to poll) and hands it to the loop through an
// inbox; a registered wait says when a child exits. All three set one event, which the loop
// waits on with its next deadline as the timeout: output, an exit, Ctrl-C and wake() each end
// the wait, and no deadline is missed.
namespace fabuild {

namespace {

using child_timing::Clock;
using child_timing::kNever;
using child_timing::saturating_add;
using win32::Handle;
// What a process ended by TerminateJobObject exits with (taskkill /f gives 1 too).
constexpr UINT kTerminatedExitCode = 1;

// What the reader threads hand to the loop. Shared with them, so a reader given up on (its pipe
// held open by something outside the job) may outlive the supervisor harmlessly.
struct Inbox {
  struct Chunk {
    ProcessSupervisor::Id id;
    std::string bytes;  // empty: end of output
    std::string error;  // why reading stopped, when it was not the end of the pipe
  };
  std::mutex mutex;
  std::deque<Chunk> chunks;
  Handle event{CreateEventW(nullptr, FALSE, FALSE, nullptr)};  // auto-reset

  void push(Chunk chunk) {
    {
      const std::lock_guard lock(mutex);
      chunks.push_back(std::move(chunk));
    }
    SetEvent(event.get());
  }
};

void read_pipe(std::shared_ptr<Inbox> inbox, ProcessSupervisor::Id id, Handle pipe) {
  std::string buffer(64 * 1024, '\0');
  for (;;) {
    DWORD got = 0;
    if (!ReadFile(pipe.get(), buffer.data(), static_cast<DWORD>(buffer.size()), &got, nullptr)) {
      const DWORD error = GetLastError();
      // The last writer closed its end: the normal end. Cancelled: the loop gave up on it.
      const bool normal = error == ERROR_BROKEN_PIPE || error == ERROR_OPERATION_ABORTED;
      inbox->push({id, {}, normal ? std::string() : "reading its output: " + win32::error_message(error)});
      return;
    }
    if (got > 0) inbox->push({id, buffer.substr(0, got), {}});  // 0: a zero-byte write, not the end
  }
}

void CALLBACK on_exit(void* event, BOOLEAN) { SetEvent(static_cast<HANDLE>(event)); }

// A std::thread's Win32 handle, for CancelSynchronousIo: MSVC's native handle is one; mingw's
// posix thread model (winpthreads) keeps it behind pthread_gethandle.
HANDLE thread_handle(std::thread& thread) {
#ifdef __MINGW32__
  return pthread_gethandle(thread.native_handle());
#else
  return thread.native_handle();
#endif
}

// Killing is TerminateJobObject (killed: called); give_up_at: for processes outside its job
// holding its pipe.
struct Child : child_timing::Timing {
  Handle process;  // empty if it never started
  Handle job;
  DWORD pid = 0;
  HANDLE exit_wait = nullptr;  // RegisterWaitForSingleObject's
  std::thread reader;
  bool output_open = false;  // until the reader's last chunk
  std::string spawn_error;
  Handle log;
  std::string log_path;
  DWORD exit_code = 0;
  std::string note;

  [[nodiscard]] bool started() const { return static_cast<bool>(process); }
  [[nodiscard]] bool running() const { return started() && !exited; }
  [[nodiscard]] bool finished() const { return !started() || (exited && !output_open); }
};

ExitStatus status_of(const Child& child) {
  ExitStatus status;
  if (!child.started()) {
    status.kind = ExitStatus::Kind::kSpawnFailed;
    status.error = child.spawn_error;
    return status;
  }
  status.kind = child.stopped_as;
  status.code = static_cast<int>(child.exit_code);
  status.terminated = child.killed && child.exit_code == kTerminatedExitCode;
  // An exception code (0xC0000005 and the like) that nobody asked for is a crash: what death
  // by a signal is on POSIX. 0xC000013A is a Ctrl-C/Ctrl-Break exit, not a crash.
  if (status.kind == ExitStatus::Kind::kExited && child.exit_code >= 0xC0000000U && child.exit_code != 0xC000013AU)
    status.kind = ExitStatus::Kind::kSignaled;
  if (status.kind == ExitStatus::Kind::kTimedOut) status.timeout = child.timeout;
  status.error = child.note;
  return status;
}

void kill_now(Child& child) {
  if (child.killed) return;
  TerminateJobObject(child.job.get(), kTerminatedExitCode);
  // The leader by its handle too: Wine's TerminateJobObject passes over a process still starting
  // up. Whatever it starts later is in the job, which reap() terminates again once it has exited.
  TerminateProcess(child.process.get(), kTerminatedExitCode);
  child.killed = true;
}

// Ctrl-Break to its process group (a console program's SIGTERM: it may clean up), then
// TerminateJobObject `grace` later unless it is gone. A child without our console misses the
// Ctrl-Break and is terminated at the end of the grace.
void stop(Child& child, ExitStatus::Kind why, std::chrono::milliseconds grace, Clock::time_point now) {
  if (!child.stopping()) child.stopped_as = why;
  if (grace.count() == 0) {
    kill_now(child);
    return;
  }
  GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, child.pid);
  child.kill_at = std::min(child.kill_at, saturating_add(now, grace));
}

// Once the leader exited, whatever is left in its job dies at once: a cell's leftovers must not
// outlive it, nor keep its pipe open and the cell "running".
void reap(Child& child, Clock::time_point now) {
  if (WaitForSingleObject(child.process.get(), 0) != WAIT_OBJECT_0) return;
  GetExitCodeProcess(child.process.get(), &child.exit_code);
  TerminateJobObject(child.job.get(), kTerminatedExitCode);
  child.exited = true;
  child.give_up_at = saturating_add(now, child.grace);
}

void append_to_log(Child& child, std::string_view chunk) {
  while (child.log && !chunk.empty()) {
    DWORD written = 0;
    if (!WriteFile(child.log.get(), chunk.data(), static_cast<DWORD>(chunk.size()), &written, nullptr)) {
      child.note = fmt::format("log {} is incomplete: {}", child.log_path, win32::error_message(GetLastError()));
      spdlog::warn("process {}: {}", child.pid, child.note);
      child.log.reset();
      return;
    }
    chunk.remove_prefix(written);
  }
}

class Win32Supervisor final : public ProcessSupervisor {
 public:
  Win32Supervisor() : inbox_(std::make_shared<Inbox>()), interrupts_(inbox_->event.get()) {
    if (!inbox_->event) throw std::runtime_error(win32::last_error("CreateEventW"));
  }

  ~Win32Supervisor() override {
    for (auto& [id, child] : children_) {
      if (child.running()) kill_now(child);
    }
    for (auto& [id, child] : children_) release(child);
  }

  Id start(const ProcessSpec& spec) override {
    const Id id = next_id_++;
    Child& child = children_[id];
    child.log_path = spec.log_path;
    child.timeout = spec.timeout;
    child.grace = spec.kill_grace;
    if (const Expected<void> launched = launch(id, spec, child); !launched) child.spawn_error = launched.error().what;
    if (!child.spawn_error.empty()) {
      release(child);
      child.process.reset();
      spdlog::debug("process #{}: {}", id, child.spawn_error);
    } else {
      spdlog::debug("process #{} (pid {}): {} (cwd: {}, env: {})", id, child.pid, join(spec.argv, " "),
                    spec.cwd.empty() ? "inherited" : spec.cwd, environment_for_log(spec.env));
    }
    return id;
  }

  std::vector<std::pair<Id, ExitStatus>> wait(std::chrono::milliseconds max_wait) override {
    const Clock::time_point until = saturating_add(Clock::now(), max_wait);
    const int interrupts = interrupts_.count();
    std::vector<std::pair<Id, ExitStatus>> finished;
    for (bool waited = false;; waited = true) {
      drain_inbox();
      const Clock::time_point now = Clock::now();
      for (auto& [id, child] : children_) {
        if (child.running()) reap(child, now);
        if (child.started()) enforce_deadlines(child, now);
      }
      for (auto it = children_.begin(); it != children_.end();) {
        if (!it->second.finished()) {
          ++it;
          continue;
        }
        finished.emplace_back(it->first, status_of(it->second));
        release(it->second);
        it = children_.erase(it);
      }
      if (!finished.empty() || interrupts_.count() != interrupts || woken_ || (waited && now >= until)) {
        woken_ = false;
        return finished;
      }
      const Clock::time_point deadline = std::min(until, next_deadline());
      DWORD timeout = INFINITE;
      if (deadline != kNever) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
        timeout = static_cast<DWORD>(std::clamp<long long>(left, 0, INFINITE - 1));
      }
      WaitForSingleObject(inbox_->event.get(), timeout);
    }
  }

  void wake() override {
    {
      const std::lock_guard lock(inbox_->mutex);
      wake_pending_ = true;
    }
    SetEvent(inbox_->event.get());
  }

  void cancel_all(std::chrono::milliseconds grace) override {
    child_timing::cancel(children_, cancelled_, grace, stop, kill_now);
  }

  void cancel(Id id, std::chrono::milliseconds grace) override { child_timing::cancel_one(children_, id, grace, stop); }

  [[nodiscard]] std::size_t running() const override { return children_.size(); }
  [[nodiscard]] int interrupt_signal() const override { return interrupts_.last_signal(); }
  [[nodiscard]] int interrupt_count() const override { return interrupts_.count(); }

 private:
  Expected<void> launch(Id id, const ProcessSpec& spec, Child& child) {
    if (spec.argv.empty()) return fail("empty argv: no program to run");
    const Expected<std::string> program = win32::find_program(spec);
    if (!program) return tl::make_unexpected(program.error());
    if (!spec.log_path.empty()) {
      child.log.reset(CreateFileW(std::filesystem::path(spec.log_path).wstring().c_str(), FILE_APPEND_DATA,
                                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_ALWAYS,
                                  FILE_ATTRIBUTE_NORMAL, nullptr));
      if (!child.log) return fail(win32::last_error(fmt::format("CreateFileW({})", spec.log_path)));
    }
    HANDLE read_end = nullptr;
    HANDLE write_end = nullptr;
    if (!CreatePipe(&read_end, &write_end, nullptr, 0)) return fail(win32::last_error("CreatePipe"));
    Handle reader_pipe(read_end);
    const Handle writer_pipe(write_end);  // ours closes once the child has its copy
    Expected<win32::Started> started = win32::spawn(spec, *program, writer_pipe.get());
    if (!started) return tl::make_unexpected(started.error());
    child.process = std::move(started->process);
    child.job = std::move(started->job);
    child.pid = started->pid;
    child.output_open = true;
    child.reader = std::thread(read_pipe, inbox_, id, std::move(reader_pipe));
    if (!RegisterWaitForSingleObject(&child.exit_wait, child.process.get(), on_exit, inbox_->event.get(), INFINITE,
                                     WT_EXECUTEONLYONCE)) {
      child.exit_wait = nullptr;  // the deadlines still come round; exits are seen then
      spdlog::warn("process {}: {}", child.pid, win32::last_error("RegisterWaitForSingleObject"));
    }
    if (spec.timeout.count() > 0) child.timeout_at = saturating_add(Clock::now(), spec.timeout);
    return {};
  }

  void drain_inbox() {
    std::deque<Inbox::Chunk> chunks;
    {
      const std::lock_guard lock(inbox_->mutex);
      chunks.swap(inbox_->chunks);
      if (wake_pending_) woken_ = true;
      wake_pending_ = false;
    }
    for (auto& chunk : chunks) {
      auto it = children_.find(chunk.id);
      if (it == children_.end() || !it->second.output_open) continue;  // given up on already
      Child& child = it->second;
      if (chunk.bytes.empty()) {
        child.output_open = false;
        if (!chunk.error.empty()) child.note = chunk.error;
        continue;
      }
      append_to_log(child, chunk.bytes);
      // on_output may start more children; `child` stays valid (std::map).
      if (on_output) on_output(chunk.id, chunk.bytes);
    }
  }

  void enforce_deadlines(Child& child, Clock::time_point now) {
    if (child.exited) {
      if (child.output_open && now >= child.give_up_at) {
        child.output_open = false;
        child.note = "a process outside its job still held its output open";
        spdlog::warn("process {}: {}; no longer reading it", child.pid, child.note);
        CancelSynchronousIo(thread_handle(child.reader));
      }
      return;
    }
    child_timing::enforce(child, now, stop, kill_now);
  }

  [[nodiscard]] Clock::time_point next_deadline() const {
    Clock::time_point next = kNever;
    for (const auto& [id, child] : children_) {
      if (child.started()) next = std::min(next, child.next(child.output_open));
    }
    return next;
  }

  // Waits for the leader (killed already if it was running), then lets go of the reader: joined
  // when its pipe ended, else cancelled and left to finish on its own (it shares the inbox).
  static void release(Child& child) {
    if (child.started()) WaitForSingleObject(child.process.get(), INFINITE);
    if (child.exit_wait != nullptr) UnregisterWaitEx(child.exit_wait, INVALID_HANDLE_VALUE);
    child.exit_wait = nullptr;
    if (!child.reader.joinable()) return;
    if (child.output_open) {
      CancelSynchronousIo(thread_handle(child.reader));
      child.reader.detach();
    } else {
      child.reader.join();
    }
  }

  std::shared_ptr<Inbox> inbox_;
  win32::ConsoleInterrupts interrupts_;
  std::map<Id, Child> children_;
  Id next_id_ = 1;
  bool cancelled_ = false;
  bool wake_pending_ = false;  // under inbox_->mutex: wake() may come from any thread
  bool woken_ = false;
};

}  // namespace

std::unique_ptr<ProcessSupervisor> make_process_supervisor() { return std::make_unique<Win32Supervisor>(); }

std::string self_executable() {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetModuleFileNameW(nullptr, path.data(), static_cast<DWORD>(path.size()));
    if (n == 0) return {};
    if (n < path.size()) return win32::narrow(std::wstring_view(path.data(), n));
    path.resize(path.size() * 2);
  }
}

}  // namespace fabuild
