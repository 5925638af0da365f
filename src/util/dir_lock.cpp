#include "util/dir_lock.h"

#include "util/error.h"

namespace fabuild {

DirectoryLock DirLock::take(const std::filesystem::path& dir) {
  try {
    return DirectoryLock(dir);
  } catch (const std::runtime_error& e) {
    throw UserError(kExitCellFailed, Location{dir.string()}, e.what(),
                    "check that the directory exists and is readable, and that its disk is not full");
  }
}

DirLock::DirLock(const std::filesystem::path& dir) : lock_(take(dir)) {}

}  // namespace fabuild
