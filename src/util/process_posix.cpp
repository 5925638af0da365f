#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "util/child_timing.h"
#include "util/process.h"
#include "util/signals.h"
#include "util/spawn_posix.h"
#include "util/text.h"

namespace fabuild {

namespace {

using child_timing::Clock;
using child_timing::kNever;
using child_timing::saturating_add;

std::string message(int error) { return std::generic_category().message(error); }

class Fd {
 public:
  Fd() = default;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&&) = delete;
  ~Fd() { reset(); }
  [[nodiscard]] int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Killing is SIGKILL to its group; exited: reaped, wait_status is valid; give_up_at: for
// descendants that left its group holding the pipe.
struct Child : child_timing::Timing {
  pid_t pid = 0;            // also its process group id; 0 if it never started
  std::string spawn_error;  // why it never started
  Fd output;                // our end of its stdout+stderr pipe; closed at EOF
  Fd log;
  std::string log_path;
  int wait_status = 0;
  std::string note;

  [[nodiscard]] bool running() const { return pid != 0 && !exited; }
  [[nodiscard]] bool finished() const { return pid == 0 || (exited && !output); }
};

ExitStatus status_of(const Child& child) {
  ExitStatus status;
  if (child.pid == 0) {
    status.kind = ExitStatus::Kind::kSpawnFailed;
    status.error = child.spawn_error;
    return status;
  }
  status.kind = child.stopped_as;
  if (WIFSIGNALED(child.wait_status)) {
    status.signal = WTERMSIG(child.wait_status);
    if (status.kind == ExitStatus::Kind::kExited) status.kind = ExitStatus::Kind::kSignaled;
  } else {
    status.code = WEXITSTATUS(child.wait_status);
  }
  if (status.kind == ExitStatus::Kind::kTimedOut) status.timeout = child.timeout;
  status.error = child.note;
  return status;
}

// SIGTERM, then SIGKILL `grace` later unless it is gone. SIGCONT so that a stopped (^Z) group
// gets the SIGTERM now rather than never.
void stop(Child& child, ExitStatus::Kind why, std::chrono::milliseconds grace, Clock::time_point now) {
  if (!child.stopping()) child.stopped_as = why;
  ::kill(-child.pid, SIGTERM);
  ::kill(-child.pid, SIGCONT);
  child.kill_at = std::min(child.kill_at, saturating_add(now, grace));
}

void kill_now(Child& child) {
  ::kill(-child.pid, SIGKILL);
  child.killed = true;
}

// Reaps the leader if it exited and SIGKILLs the rest of its group first: while the leader is an
// unreaped zombie its pid cannot be reused, so -pid still names its group and nobody else's.
void reap(Child& child, Clock::time_point now) {
  siginfo_t info = {};
  const int rc = ::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOHANG | WNOWAIT);
  if (rc == 0 && info.si_pid != child.pid) return;  // still running
  if (rc == 0) {
    ::kill(-child.pid, SIGKILL);
    while (::waitpid(child.pid, &child.wait_status, 0) < 0 && errno == EINTR) {
    }
  } else {
    // ECHILD: reaped by someone else (waitpid(-1), SIGCHLD ignored elsewhere). Its pid may be
    // reused already, so its group is not ours to signal any more; and it must not read as success.
    child.wait_status = 255 << 8;
    child.note = "its exit status was taken by someone else: " + message(errno);
  }
  child.exited = true;
  child.give_up_at = saturating_add(now, child.grace);
}

void enforce_deadlines(Child& child, Clock::time_point now) {
  if (child.exited) {
    if (child.output && now >= child.give_up_at) {
      child.output.reset();
      child.note = "a descendant that left its process group still held its output open";
      spdlog::warn("process {}: {}; no longer reading it", child.pid, child.note);
    }
    return;
  }
  child_timing::enforce(child, now, stop, kill_now);
}

// A full disk should not also cost the hours of compilation still running: warn, keep building.
void append_to_log(Child& child, std::string_view chunk) {
  while (child.log && !chunk.empty()) {
    const ssize_t written = ::write(child.log.get(), chunk.data(), chunk.size());
    if (written >= 0) {
      chunk.remove_prefix(static_cast<std::size_t>(written));
    } else if (errno != EINTR) {
      child.note = fmt::format("log {} is incomplete: {}", child.log_path, message(errno));
      spdlog::warn("process {}: {}", child.pid, child.note);
      child.log.reset();
    }
  }
}

class PosixSupervisor final : public ProcessSupervisor {
 public:
  PosixSupervisor() {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
    wake_read_.reset(ends[0]);
    wake_write_.reset(ends[1]);
  }

  ~PosixSupervisor() override {
    // The leader by pid too: a reaping wait for one that escaped the group kill would never end.
    for (auto& [id, child] : children_) {
      if (!child.running()) continue;
      ::kill(-child.pid, SIGKILL);
      ::kill(child.pid, SIGKILL);
    }
    for (auto& [id, child] : children_)
      if (child.running())
        while (::waitpid(child.pid, &child.wait_status, 0) < 0 && errno == EINTR) {
        }
  }

  Id start(const ProcessSpec& spec) override {
    const Id id = next_id_++;
    Child child;
    child.log_path = spec.log_path;
    child.timeout = spec.timeout;
    child.grace = spec.kill_grace;
    if (const Expected<void> launched = launch(spec, child); !launched) child.spawn_error = launched.error().what;
    if (!child.spawn_error.empty()) {
      child.pid = 0;
      child.output.reset();
      child.log.reset();
      spdlog::debug("process #{}: {}", id, child.spawn_error);
    } else {
      spdlog::debug("process #{} (pid {}): {} (cwd: {}, env: {})", id, child.pid, join(spec.argv, " "),
                    spec.cwd.empty() ? "inherited" : spec.cwd, environment_for_log(spec.env));
    }
    children_.emplace(id, std::move(child));
    return id;
  }

  std::vector<std::pair<Id, ExitStatus>> wait(std::chrono::milliseconds max_wait) override {
    const Clock::time_point until = saturating_add(Clock::now(), max_wait);
    const int interrupts = signals_.count();
    std::vector<std::pair<Id, ExitStatus>> finished;
    // Poll at least once even when max_wait is 0: a child blocked on a full pipe needs us to read.
    for (bool polled = false;; polled = true) {
      const Clock::time_point now = Clock::now();
      for (auto& [id, child] : children_) {
        if (child.running()) reap(child, now);
        if (child.pid != 0) enforce_deadlines(child, now);
      }
      for (auto it = children_.begin(); it != children_.end();) {
        if (!it->second.finished()) {
          ++it;
          continue;
        }
        finished.emplace_back(it->first, status_of(it->second));
        it = children_.erase(it);
      }
      if (!finished.empty() || signals_.count() != interrupts || woken_ || (polled && now >= until)) {
        woken_ = false;
        return finished;
      }
      poll_once(std::min(until, next_deadline()));
    }
  }

  void wake() override {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_write_.get(), &byte, 1);  // a full pipe is woken already
  }

  void cancel_all(std::chrono::milliseconds grace) override {
    child_timing::cancel(children_, cancelled_, grace, stop, kill_now);
  }

  void cancel(Id id, std::chrono::milliseconds grace) override { child_timing::cancel_one(children_, id, grace, stop); }

  [[nodiscard]] std::size_t running() const override { return children_.size(); }
  [[nodiscard]] int interrupt_signal() const override { return signals_.last_signal(); }
  [[nodiscard]] int interrupt_count() const override { return signals_.count(); }

 private:
  static Expected<void> launch(const ProcessSpec& spec, Child& child) {
    if (spec.argv.empty()) return fail("empty argv: no program to run");
    const Expected<std::string> program = posix::find_program(spec);
    if (!program) return tl::make_unexpected(program.error());
    if (!spec.log_path.empty()) {
      child.log.reset(::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666));
      if (!child.log) return fail(fmt::format("open({}): {}", spec.log_path, message(errno)));
    }
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return fail("pipe2: " + message(errno));
    child.output.reset(ends[0]);
    Fd write_end;
    write_end.reset(ends[1]);
    // Only on our end: the child's writes to a full pipe must block, not fail with EAGAIN.
    if (::fcntl(child.output.get(), F_SETFL, O_NONBLOCK) != 0) return fail("fcntl(O_NONBLOCK): " + message(errno));
    const Expected<pid_t> pid = posix::spawn(spec, *program, write_end.get());
    if (!pid) return tl::make_unexpected(pid.error());
    child.pid = *pid;
    if (spec.timeout.count() > 0) child.timeout_at = saturating_add(Clock::now(), spec.timeout);
    return {};
  }

  [[nodiscard]] Clock::time_point next_deadline() const {
    Clock::time_point next = kNever;
    for (const auto& [id, child] : children_) {
      if (child.pid != 0) next = std::min(next, child.next(static_cast<bool>(child.output)));
    }
    return next;
  }

  // One ppoll: returns on output, EOF, any of our signals (SIGCHLD included), wake(), or `until`.
  void poll_once(Clock::time_point until) {
    std::vector<pollfd> fds = {pollfd{wake_read_.get(), POLLIN, 0}};
    std::vector<Id> ids = {0};
    for (const auto& [id, child] : children_) {
      if (!child.output) continue;
      fds.push_back(pollfd{child.output.get(), POLLIN, 0});
      ids.push_back(id);
    }
    const auto timeout =
        until == kNever ? std::chrono::nanoseconds(-1) : std::max(std::chrono::nanoseconds(0), until - Clock::now());
    if (signals_.ppoll(fds, timeout) < 0) {
      if (errno == EINTR) return;
      throw std::system_error(errno, std::generic_category(), "ppoll");
    }
    if (fds[0].revents != 0) {
      char drained[64];
      while (::read(wake_read_.get(), drained, sizeof drained) > 0) {
      }
      woken_ = true;
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      // on_output may have started more children; map references stay valid.
      if (auto it = children_.find(ids[i]); it != children_.end()) read_output(it->first, it->second);
    }
  }

  // One read per wakeup, so a chatty child cannot starve the others.
  void read_output(Id id, Child& child) {
    char buffer[64 * 1024];
    const ssize_t got = ::read(child.output.get(), buffer, sizeof buffer);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (got <= 0) {
      if (got < 0) child.note = "reading its output: " + message(errno);
      child.output.reset();
      return;
    }
    const std::string_view chunk(buffer, static_cast<std::size_t>(got));
    append_to_log(child, chunk);
    if (on_output) on_output(id, chunk);
  }

  InterruptSignals signals_;  // first member, so restored last: after every child is reaped
  std::map<Id, Child> children_;
  Id next_id_ = 1;
  bool cancelled_ = false;
  Fd wake_read_;  // wake(): a byte on this pipe ends the ppoll
  Fd wake_write_;
  bool woken_ = false;
};

}  // namespace

std::unique_ptr<ProcessSupervisor> make_process_supervisor() { return std::make_unique<PosixSupervisor>(); }

std::string self_executable() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : path.string();
}

}  // namespace fabuild
