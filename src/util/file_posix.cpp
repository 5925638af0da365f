#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "util/file.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

tl::unexpected<Failure> refused(const std::string& doing, const fs::path& path, int error) {
  return fail("cannot " + doing + " " + path.string() + ": " + std::strerror(error));
}

int fd_of(std::intptr_t native) { return static_cast<int>(native); }

}  // namespace

Expected<File> File::open(const fs::path& path, Mode mode) {
  const int flags = mode == Mode::kAppend      ? O_WRONLY | O_CREAT | O_APPEND
                    : mode == Mode::kReadWrite ? O_RDWR | O_CREAT
                                               : O_WRONLY | O_CREAT | O_EXCL;
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return refused("open", path, errno);
  return File(path, fd);
}

File::File(File&& other) noexcept : path_(std::move(other.path_)), native_(std::exchange(other.native_, kNone)) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    native_ = std::exchange(other.native_, kNone);
  }
  return *this;
}

File::~File() { release(); }

void File::release() noexcept {
  if (native_ != kNone) ::close(fd_of(native_));
  native_ = kNone;
}

Expected<void> File::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_of(native_), bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return refused("write", path_, n < 0 ? errno : EIO);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Expected<void> File::sync() {
  if (::fsync(fd_of(native_)) != 0) return refused("flush to disk", path_, errno);
  return {};
}

Expected<void> File::truncate() {
  if (::ftruncate(fd_of(native_), 0) != 0) return refused("truncate", path_, errno);
  ::lseek(fd_of(native_), 0, SEEK_SET);  // O_APPEND writes go to the end anyway
  return {};
}

std::uint64_t File::size() const {
  struct stat st {};
  return ::fstat(fd_of(native_), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

Expected<void> File::close() {
  const int fd = fd_of(std::exchange(native_, kNone));
  if (::close(fd) != 0) return refused("close", path_, errno);
  return {};
}

namespace {

// flock(2) without waiting: false when another holder's lock stands in the way.
Expected<bool> try_flock(int fd, int operation, const fs::path& path) {
  while (::flock(fd, operation | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return false;
    return refused("lock", path, errno);
  }
  return true;
}

}  // namespace

Expected<bool> File::try_lock() { return try_flock(fd_of(native_), LOCK_EX, path_); }

Expected<void> File::lock() {
  while (::flock(fd_of(native_), LOCK_EX) != 0) {
    if (errno != EINTR) return refused("lock", path_, errno);
  }
  return {};
}

Expected<bool> File::try_lock_shared() { return try_flock(fd_of(native_), LOCK_SH, path_); }

Expected<File> create_temp_beside(const fs::path& path, fs::path& temp) {
  const std::string pattern = (path.parent_path() / ("." + path.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  const int fd = ::mkostemp(buffer.data(), O_CLOEXEC);
  if (fd < 0) return refused("create a temporary file beside", path, errno);
  ::fchmod(fd, 0644);  // mkostemp makes it 0600; a filed wheel is for everyone to read
  temp = buffer.data();
  return File(temp, fd);
}

Expected<fs::path> make_temp_directory(const std::string& prefix, const fs::path& in) {
  const std::string pattern = ((in.empty() ? fs::temp_directory_path() : in) / (prefix + "XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) return refused("make a temporary directory", pattern, errno);
  return fs::path(buffer.data());
}

Expected<void> replace_file(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return refused("rename " + from.string() + " to", to, errno);
  return {};
}

Expected<bool> replace_file_on_same_device(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) == 0) return true;
  if (errno == EXDEV) return false;
  return refused("rename " + from.string() + " to", to, errno);
}

Expected<void> rename_directory(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) return refused("rename " + from.string() + " to", to, ec.value());
  return {};
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

bool set_last_write_time(const fs::path& path, fs::file_time_type when) {
  std::error_code ec;
  fs::last_write_time(path, when, ec);
  return !ec;
}

std::optional<FileIdentity> identity_of(const fs::path& path) {
  struct stat st = {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const auto ns = [](const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1000000000LL + t.tv_nsec; };
  return FileIdentity{static_cast<std::uint64_t>(st.st_dev),
                      static_cast<std::uint64_t>(st.st_ino),
                      static_cast<std::int64_t>(st.st_size),
                      ns(st.st_mtim),
                      ns(st.st_ctim),
                      static_cast<std::uint64_t>(st.st_nlink)};
}

}  // namespace fabuild
