#pragma once

// An exclusive lock on a directory, held for the object's lifetime: processes that fill or
// rewrite what the directory holds (a wheelhouse's SHA256SUMS, a toolkit being installed, a
// shard of the object cache) take turns. It leaves no lock file behind, and the system drops it
// when its holder dies, however it dies. POSIX (dir_lock_posix.cpp): flock(2) on the directory
// itself. Windows (dir_lock_win32.cpp), which cannot lock a directory: a named mutex for the
// directory's final path; a mutex belongs to the thread that takes it, so a lock is made and
// destroyed on one thread (each is a local variable).

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "util/expected.h"

namespace fabuild {

// Blocks until the lock is this process's; a Failure ("cannot lock DIR: why") when the
// directory cannot be opened or locked. The constructor throws that as std::runtime_error
// (fabuild-cc, whose top level reports it). Uses no fmt: fabuild-cc links it.
class DirectoryLock {
 public:
  [[nodiscard]] static Expected<DirectoryLock> acquire(const std::filesystem::path& dir);
  // fabuild-cc's: what acquire could not do unwinds to its top level.
  explicit DirectoryLock(const std::filesystem::path& dir)
      : DirectoryLock([&] {
          Expected<DirectoryLock> lock = acquire(dir);
          if (!lock) throw std::runtime_error(lock.error().what);
          return std::move(*lock);
        }()) {}
  DirectoryLock(DirectoryLock&& other) noexcept : native_(std::exchange(other.native_, kNone)) {}
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  DirectoryLock& operator=(DirectoryLock&&) = delete;

 private:
  static constexpr std::intptr_t kNone = -1;
  explicit DirectoryLock(std::intptr_t native) : native_(native) {}
  std::intptr_t native_ = kNone;  // the descriptor (POSIX) or the mutex HANDLE (Windows)
};

// The same for fabuild's layers: the Failure names the directory and says what to check; the
// constructor throws it as a UserError (exit 1).
class DirLock {
 public:
  [[nodiscard]] static Expected<DirLock> acquire(const std::filesystem::path& dir);
  explicit DirLock(const std::filesystem::path& dir);

 private:
  explicit DirLock(DirectoryLock lock) : lock_(std::move(lock)) {}
  DirectoryLock lock_;
};

}  // namespace fabuild
