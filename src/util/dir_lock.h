#pragma once

// An exclusive flock(2) on a directory, held for the object's lifetime: processes that fill or
// rewrite what the directory holds (a wheelhouse's SHA256SUMS, a toolkit being installed) take
// turns. Locking the directory itself leaves no lock file behind, and the kernel drops the lock
// when its holder dies, however it dies.

#include <filesystem>

namespace fabuild {

class DirLock {
 public:
  // Blocks until the lock is this process's; throws UserError (exit 1) when the directory
  // cannot be opened or locked.
  explicit DirLock(const std::filesystem::path& dir);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace fabuild
