#include "wheel/wheelhouse_lock.h"

#include <fmt/format.h>

#include "util/error.h"

namespace fabuild {

namespace fs = std::filesystem;

Expected<WheelhouseLock> WheelhouseLock::take(const fs::path& wheelhouse, const std::string& command, bool wait,
                                              const std::function<void(const LockHolder&)>& waiting) {
  const fs::path path = wheelhouse / kWheelhouseLockName;
  const auto unusable = [&](const Failure& f) {
    return fail(printable(path.string() + ": " + f.what), "check that the wheelhouse directory is writable");
  };
  if (wait) {
    Expected<HolderLock> lock = HolderLock::take(path, command, waiting);
    if (!lock) return unusable(lock.error());
    return WheelhouseLock(std::move(*lock));
  }
  Expected<std::optional<HolderLock>> lock = HolderLock::try_take(path, command);
  if (!lock) return unusable(lock.error());
  if (*lock) return WheelhouseLock(std::move(**lock));
  throw UserError(
      kExitWheelhouseBusy, Location{wheelhouse.string()},
      fmt::format("another fabuild is building into this wheelhouse: {}", current_lock_holder(path).describe()),
      "wait for it to finish (or stop it), run again with --wait-lock to queue behind it, "
      "or build into another directory with -o");
}

LockHolder read_lock_holder(const fs::path& wheelhouse) {
  return read_lock_holder_file(wheelhouse / kWheelhouseLockName);
}

}  // namespace fabuild
