#include "util/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/error.h"

namespace fabuild {

namespace {

UserError lock_error(const std::filesystem::path& dir, const char* doing, int err) {
  return UserError(kExitCellFailed, Location{dir.string()}, fmt::format("cannot {}: {}", doing, std::strerror(err)),
                   "check that the directory exists and is readable, and that its disk is not full");
}

}  // namespace

DirLock::DirLock(const std::filesystem::path& dir) {
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw lock_error(dir, "open the directory to lock it", errno);
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const int err = errno;
      ::close(fd_);
      throw lock_error(dir, "lock the directory", err);
    }
  }
}

DirLock::~DirLock() { ::close(fd_); }  // closing releases the lock

}  // namespace fabuild
