#pragma once

// One build at a time per wheelhouse. Two runs filing into one directory could each rewrite
// SHA256SUMS or the manifest from what they read before the other wrote; a run's startup
// recovery (recovery.h) would remove the other's staging directories. So a build holds an
// exclusive lock (util/holder_lock.h: flock(2), LockFileEx on Windows) on WHEELHOUSE/.fabuild.lock
// from before it looks at the wheelhouse until it exits. The system drops the lock when the
// process dies, however it dies: a SIGKILL leaves no stale lock to clean up by hand. The file
// keeps who holds it, for the refusal message.

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>

#include "util/expected.h"
#include "util/holder_lock.h"

namespace fabuild {

inline constexpr const char* kWheelhouseLockName = ".fabuild.lock";

class WheelhouseLock {
 public:
  // Takes the lock on `wheelhouse` (created if missing) for this process. When another
  // process holds it: with `wait`, calls `waiting` once with the holder and blocks until it is
  // free; without, throws UserError with kExitWheelhouseBusy naming the holder. A lock file
  // that cannot be made or locked is a Failure naming it.
  [[nodiscard]] static Expected<WheelhouseLock> take(const std::filesystem::path& wheelhouse,
                                                     const std::string& command, bool wait,
                                                     const std::function<void(const LockHolder&)>& waiting = {});

 private:
  explicit WheelhouseLock(HolderLock lock) : lock_(std::move(lock)) {}
  HolderLock lock_;  // released with it
};

// What the lock file says; pid 0 when it is missing or unreadable.
LockHolder read_lock_holder(const std::filesystem::path& wheelhouse);

}  // namespace fabuild
