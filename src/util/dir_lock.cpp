#include "util/dir_lock.h"

#include "util/error.h"

namespace fabuild {

Expected<DirLock> DirLock::acquire(const std::filesystem::path& dir) {
  Expected<DirectoryLock> lock = DirectoryLock::acquire(dir);
  if (!lock) {
    return fail(dir.string() + ": " + lock.error().what,
                "check that the directory exists and is readable, and that its disk is not full");
  }
  return DirLock(std::move(*lock));
}

DirLock::DirLock(const std::filesystem::path& dir)
    : DirLock([&] {
        Expected<DirLock> lock = acquire(dir);
        if (!lock) throw user_error_of(lock.error());
        return std::move(*lock);
      }()) {}

}  // namespace fabuild
