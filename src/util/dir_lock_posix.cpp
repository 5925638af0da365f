#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "util/dir_lock.h"

namespace fabuild {

DirectoryLock::DirectoryLock(const std::filesystem::path& dir) {
  const auto fail = [&](const char* doing, int error) {
    throw std::runtime_error(std::string("cannot ") + doing + " " + dir.string() + ": " + std::strerror(error));
  };
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("open the directory to lock it:", errno);
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const int error = errno;
      ::close(fd);
      fail("lock the directory", error);
    }
  }
  native_ = fd;
}

DirectoryLock::~DirectoryLock() { ::close(static_cast<int>(native_)); }  // closing releases the lock

}  // namespace fabuild
