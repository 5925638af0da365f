#pragma once

// One build at a time per wheelhouse. Two runs filing into one directory could each rewrite
// SHA256SUMS or the manifest from what they read before the other wrote; a run's startup
// recovery (recovery.h) would remove the other's staging directories. So a build holds an
// exclusive lock (util/file.h: flock(2), LockFileEx on Windows) on WHEELHOUSE/.fabuild.lock from
// before it looks at the wheelhouse until it exits. The system drops the lock when the process
// dies, however it dies: a SIGKILL leaves no stale lock to clean up by hand. The file keeps who
// holds it, for the refusal message.

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "util/file.h"

namespace fabuild {

inline constexpr const char* kWheelhouseLockName = ".fabuild.lock";

// Who holds (or last held) a wheelhouse's lock, as its holder wrote it.
struct LockHolder {
  long pid = 0;
  std::string host;
  std::string since;    // UTC, ISO 8601
  std::string command;  // the holder's argv, space-joined

  // "pid 4242 on buildbox since 2025-01-01T10:00:00Z (fabuild matrix.yaml)"
  [[nodiscard]] std::string describe() const;
};

class WheelhouseLock {
 public:
  // Takes the lock on `wheelhouse` (created if missing) for this process. When another
  // process holds it: with `wait`, calls `waiting` once with the holder and blocks until it is
  // free; without, throws UserError with kExitWheelhouseBusy naming the holder.
  WheelhouseLock(const std::filesystem::path& wheelhouse, const std::string& command, bool wait,
                 const std::function<void(const LockHolder&)>& waiting = {});
  ~WheelhouseLock();  // releases it (closing the file does)
  WheelhouseLock(const WheelhouseLock&) = delete;
  WheelhouseLock& operator=(const WheelhouseLock&) = delete;

 private:
  File file_;
};

// What the lock file says; pid 0 when it is missing or unreadable.
LockHolder read_lock_holder(const std::filesystem::path& wheelhouse);

}  // namespace fabuild
