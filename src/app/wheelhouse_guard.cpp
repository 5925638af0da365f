#include "app/wheelhouse_guard.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace fabuild {

std::unique_ptr<WheelhouseLock> lock_wheelhouse(const std::string& dir, const std::string& command, bool wait,
                                                std::ostream& out) {
  return std::make_unique<WheelhouseLock>(dir, command, wait, [&](const LockHolder& holder) {
    fmt::print(out, "fabuild: waiting for {}: another fabuild is building into it: {}\n", dir, holder.describe());
    out.flush();
  });
}

std::unique_ptr<WheelhouseLock> lock_existing_wheelhouse(const Files& files, const std::string& dir,
                                                         const std::string& command, bool wait, std::ostream& out) {
  if (!files.is_directory(dir)) return nullptr;
  return lock_wheelhouse(dir, command, wait, out);
}

}  // namespace fabuild
