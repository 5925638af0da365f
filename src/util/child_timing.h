#pragma once

// The deadlines both process supervisors (process_posix.cpp, process_win32.cpp) keep for a
// child, and the rules they follow with them; each supervisor brings its own way to ask a child
// to stop and to kill it. Internal to util.

#include <algorithm>
#include <chrono>

#include "util/process.h"

namespace fabuild::child_timing {

using Clock = std::chrono::steady_clock;
constexpr Clock::time_point kNever = Clock::time_point::max();

// from + delay, or kNever where that would overflow; a negative delay counts as none.
inline Clock::time_point saturating_add(Clock::time_point from, std::chrono::milliseconds delay) {
  if (delay >= std::chrono::duration_cast<std::chrono::milliseconds>(kNever - from)) return kNever;
  return from + std::max(delay, std::chrono::milliseconds(0));
}

struct Timing {
  std::chrono::milliseconds timeout{0};
  std::chrono::milliseconds grace{0};
  Clock::time_point timeout_at = kNever;
  Clock::time_point kill_at = kNever;     // the kill due once it was asked to stop
  Clock::time_point give_up_at = kNever;  // once its leader exited: stop reading what leftovers hold open
  ExitStatus::Kind stopped_as = ExitStatus::Kind::kExited;  // kTimedOut/kCancelled once we stop it
  bool killed = false;
  bool exited = false;  // its leader's exit is collected

  [[nodiscard]] bool stopping() const { return stopped_as != ExitStatus::Kind::kExited; }

  // The next of its deadlines; `reading`: its output is still being read.
  [[nodiscard]] Clock::time_point next(bool reading) const {
    if (exited) return reading ? give_up_at : kNever;
    Clock::time_point next = kNever;
    if (!stopping()) next = std::min(next, timeout_at);
    if (!killed) next = std::min(next, kill_at);
    return next;
  }
};

// A running child past its timeout is asked to stop, and killed once its grace is over.
// stop(child, why, grace, now) and kill_now(child) are the supervisor's.
template <class Child, class Stop, class Kill>
void enforce(Child& child, Clock::time_point now, Stop stop, Kill kill_now) {
  if (!child.stopping() && now >= child.timeout_at) stop(child, ExitStatus::Kind::kTimedOut, child.grace, now);
  if (!child.killed && now >= child.kill_at) kill_now(child);
}

// cancel_all(): the first call asks every running child to stop (killed `grace` later), a
// second kills them at once.
template <class Children, class Stop, class Kill>
void cancel(Children& children, bool& cancelled, std::chrono::milliseconds grace, Stop stop, Kill kill_now) {
  const Clock::time_point now = Clock::now();
  for (auto& [id, child] : children) {
    if (!child.running()) continue;
    if (!cancelled) {
      stop(child, ExitStatus::Kind::kCancelled, grace, now);
      continue;
    }
    if (!child.stopping()) child.stopped_as = ExitStatus::Kind::kCancelled;
    kill_now(child);
  }
  cancelled = true;
}

// cancel(id): that one child, if it still runs, is asked to stop and killed `grace` later.
template <class Children, class Stop>
void cancel_one(Children& children, typename Children::key_type id, std::chrono::milliseconds grace, Stop stop) {
  const auto it = children.find(id);
  if (it != children.end() && it->second.running()) stop(it->second, ExitStatus::Kind::kCancelled, grace, Clock::now());
}

}  // namespace fabuild::child_timing
