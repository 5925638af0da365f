#include "app/wheelhouse_guard.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "util/error.h"

namespace fabuild {

std::unique_ptr<WheelhouseLock> lock_wheelhouse(const std::string& dir, const std::string& command, bool wait,
                                                std::ostream& out) {
  Expected<WheelhouseLock> lock = WheelhouseLock::take(dir, command, wait, [&](const LockHolder& holder) {
    fmt::print(out, "fabuild: waiting for {}: another fabuild is building into it: {}\n", dir, holder.describe());
    out.flush();
  });
  if (!lock) throw user_error_of(lock.error());  // the command stops: exit 1
  return std::make_unique<WheelhouseLock>(std::move(*lock));
}

std::unique_ptr<WheelhouseLock> lock_existing_wheelhouse(const Files& files, const std::string& dir,
                                                         const std::string& command, bool wait, std::ostream& out) {
  if (!files.is_directory(dir)) return nullptr;
  return lock_wheelhouse(dir, command, wait, out);
}

}  // namespace fabuild
