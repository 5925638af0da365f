#include "wheel/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/error.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

UserError io_error(const fs::path& path, const std::string& doing, int err) {
  return UserError(kExitCellFailed, Location{path.string()}, fmt::format("cannot {}: {}", doing, std::strerror(err)),
                   "check that the wheelhouse is writable and its disk is not full");
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // durability only; the rename itself already happened
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void sync_parent_directory(const fs::path& dir) {
  const fs::path normal = dir.lexically_normal();
  const fs::path parent = (normal.has_filename() ? normal : normal.parent_path()).parent_path();
  sync_directory(parent.empty() ? fs::path(".") : parent);
}

AtomicFile::AtomicFile(fs::path path) : path_(std::move(path)) {
  const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  std::string pattern = (dir / ("." + path_.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  fd_ = ::mkostemp(buffer.data(), O_CLOEXEC);
  if (fd_ < 0) throw io_error(path_, "create a temporary file next to it", errno);
  temp_ = buffer.data();
  // mkstemp makes 0600; wheelhouse files are published, so readable by everyone.
  ::fchmod(fd_, 0644);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error(temp_, "write", errno);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) throw io_error(temp_, "flush to disk", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw io_error(temp_, "close", errno);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) throw io_error(path_, "rename the temporary file into place", errno);
  committed_ = true;
  sync_directory(path_.has_parent_path() ? path_.parent_path() : fs::path("."));
}

void write_file_atomically(const fs::path& path, std::string_view content) {
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

}  // namespace fabuild
