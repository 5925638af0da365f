#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "util/dir_lock.h"

namespace fabuild {

Expected<DirectoryLock> DirectoryLock::acquire(const std::filesystem::path& dir) {
  const auto refused = [&](const char* doing, int error) {
    return fail(std::string("cannot ") + doing + " " + dir.string() + ": " + std::strerror(error));
  };
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return refused("open the directory to lock it:", errno);
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const int error = errno;
      ::close(fd);
      return refused("lock the directory", error);
    }
  }
  return DirectoryLock(static_cast<std::intptr_t>(fd));
}

DirectoryLock::~DirectoryLock() {
  if (native_ != kNone) ::close(static_cast<int>(native_));  // closing releases the lock
}

}  // namespace fabuild
