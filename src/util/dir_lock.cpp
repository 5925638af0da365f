#include "util/dir_lock.h"

#include "util/error.h"

namespace fabuild {

DirectoryLock DirLock::take(const std::filesystem::path& dir) {
  Expected<DirectoryLock> lock = DirectoryLock::acquire(dir);
  if (!lock) {
    throw UserError(kExitCellFailed, Location{dir.string()}, lock.error().what,
                    "check that the directory exists and is readable, and that its disk is not full");
  }
  return std::move(*lock);
}

DirLock::DirLock(const std::filesystem::path& dir) : lock_(take(dir)) {}

}  // namespace fabuild
