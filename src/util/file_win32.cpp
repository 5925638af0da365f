#include <random>
#include <string>
#include <utility>

#include "util/file.h"
#include "util/windows_api.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

tl::unexpected<Failure> refused(const std::string& doing, const fs::path& path, DWORD error) {
  return fail("cannot " + doing + " " + path.string() + ": " + win32::error_message(error));
}

HANDLE handle_of(std::intptr_t native) { return reinterpret_cast<HANDLE>(native); }

// Other processes may read, write, rename and delete the file while it is open, as on POSIX.
constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

// The byte the lock covers: far past the end of any file fabuild locks (see File::try_lock).
OVERLAPPED lock_range() {
  OVERLAPPED at = {};
  at.Offset = 0xFFFFFFFEU;
  at.OffsetHigh = 0x7FFFFFFFU;
  return at;
}

std::string random_letters(std::size_t n) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device device;
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kAlphabet - 2);
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += kAlphabet[pick(device)];
  return out;
}

std::int64_t nanoseconds(LARGE_INTEGER t) { return t.QuadPart * 100; }  // FILETIME counts 100 ns

}  // namespace

Expected<File> File::open(const fs::path& path, Mode mode) {
  const DWORD access = mode == Mode::kReadWrite ? GENERIC_READ | GENERIC_WRITE : GENERIC_WRITE;
  const DWORD disposition = mode == Mode::kCreateNew ? CREATE_NEW : OPEN_ALWAYS;
  const HANDLE h =
      CreateFileW(path.wstring().c_str(), access, kShareAll, nullptr, disposition, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) return refused("open", path, GetLastError());
  File file(path, reinterpret_cast<std::intptr_t>(h));
  file.append_ = mode == Mode::kAppend;
  return file;
}

File::File(File&& other) noexcept
    : path_(std::move(other.path_)), native_(std::exchange(other.native_, kNone)), append_(other.append_) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    native_ = std::exchange(other.native_, kNone);
    append_ = other.append_;
  }
  return *this;
}

File::~File() { release(); }

void File::release() noexcept {
  if (native_ != kNone) CloseHandle(handle_of(native_));
  native_ = kNone;
}

Expected<void> File::write(std::string_view bytes) {
  // FILE_APPEND_DATA alone would append by itself, but then the file could not be truncated.
  if (append_ && !SetFilePointerEx(handle_of(native_), LARGE_INTEGER{}, nullptr, FILE_END))
    return refused("seek to the end of", path_, GetLastError());
  while (!bytes.empty()) {
    DWORD written = 0;
    const auto n = static_cast<DWORD>(std::min<std::size_t>(bytes.size(), 1U << 30));
    if (!WriteFile(handle_of(native_), bytes.data(), n, &written, nullptr))
      return refused("write", path_, GetLastError());
    bytes.remove_prefix(written);
  }
  return {};
}

Expected<void> File::sync() {
  if (!FlushFileBuffers(handle_of(native_))) return refused("flush to disk", path_, GetLastError());
  return {};
}

Expected<void> File::truncate() {
  if (!SetFilePointerEx(handle_of(native_), LARGE_INTEGER{}, nullptr, FILE_BEGIN) || !SetEndOfFile(handle_of(native_)))
    return refused("truncate", path_, GetLastError());
  return {};
}

std::uint64_t File::size() const {
  LARGE_INTEGER size = {};
  return GetFileSizeEx(handle_of(native_), &size) ? static_cast<std::uint64_t>(size.QuadPart) : 0;
}

Expected<void> File::close() {
  if (!CloseHandle(handle_of(std::exchange(native_, kNone)))) return refused("close", path_, GetLastError());
  return {};
}

namespace {

// LockFileEx on the lock byte without waiting: false when another holder's lock stands in the way.
Expected<bool> try_lock_byte(HANDLE h, DWORD flags, const fs::path& path) {
  OVERLAPPED at = lock_range();
  if (LockFileEx(h, flags | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at)) return true;
  const DWORD error = GetLastError();
  if (error == ERROR_LOCK_VIOLATION || error == ERROR_IO_PENDING) return false;
  return refused("lock", path, error);
}

}  // namespace

Expected<bool> File::try_lock() { return try_lock_byte(handle_of(native_), LOCKFILE_EXCLUSIVE_LOCK, path_); }

Expected<void> File::lock() {
  OVERLAPPED at = lock_range();
  if (!LockFileEx(handle_of(native_), LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &at))
    return refused("lock", path_, GetLastError());
  return {};
}

Expected<bool> File::try_lock_shared() { return try_lock_byte(handle_of(native_), 0, path_); }

Expected<File> create_temp_beside(const fs::path& path, fs::path& temp) {
  for (int attempt = 0;; ++attempt) {
    // Appended piece by piece: GCC 12 warns wrongly (-Wrestrict) about one long '+' chain.
    std::string name = ".";
    name += path.filename().string();
    name += ".tmp.";
    name += random_letters(6);
    temp = path.parent_path() / name;
    const HANDLE h = CreateFileW(temp.wstring().c_str(), GENERIC_WRITE, kShareAll, nullptr, CREATE_NEW,
                                 FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h != INVALID_HANDLE_VALUE) return File(temp, reinterpret_cast<std::intptr_t>(h));
    const DWORD error = GetLastError();
    if (error != ERROR_FILE_EXISTS || attempt == 99) return refused("create a temporary file beside", path, error);
  }
}

Expected<fs::path> make_temp_directory(const std::string& prefix, const fs::path& in) {
  for (int attempt = 0;; ++attempt) {
    const fs::path dir = (in.empty() ? fs::temp_directory_path() : in) / (prefix + random_letters(6));
    if (CreateDirectoryW(dir.wstring().c_str(), nullptr)) return dir;
    const DWORD error = GetLastError();
    if (error != ERROR_ALREADY_EXISTS || attempt == 99) return refused("make the temporary directory", dir, error);
  }
}

Expected<void> replace_file(const fs::path& from, const fs::path& to) {
  const Expected<bool> replaced = replace_file_on_same_device(from, to);
  if (!replaced) return tl::make_unexpected(replaced.error());
  if (!*replaced) return refused("rename " + from.string() + " to", to, ERROR_NOT_SAME_DEVICE);
  return {};
}

Expected<bool> replace_file_on_same_device(const fs::path& from, const fs::path& to) {
  // ReplaceFileW would keep the old file's attributes and security; a filed file is a new one.
  if (MoveFileExW(from.wstring().c_str(), to.wstring().c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
    return true;
  const DWORD error = GetLastError();
  if (error == ERROR_NOT_SAME_DEVICE) return false;
  return refused("rename " + from.string() + " to", to, error);
}

Expected<void> rename_directory(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::is_directory(to, ec) && fs::is_empty(to, ec)) fs::remove(to, ec);
  ec.clear();
  fs::rename(from, to, ec);
  if (ec) return fail("cannot rename " + from.string() + " to " + to.string() + ": " + ec.message());
  return {};
}

void sync_directory(const fs::path&) {}  // MOVEFILE_WRITE_THROUGH made the rename durable

bool set_last_write_time(const fs::path& path, fs::file_time_type when) {
  // FILE_FLAG_BACKUP_SEMANTICS opens a directory as well as a file.
  win32::Handle h(CreateFileW(path.wstring().c_str(), FILE_WRITE_ATTRIBUTES, kShareAll, nullptr, OPEN_EXISTING,
                              FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  if (!h) return false;
  using namespace std::chrono;
  constexpr std::int64_t kFrom1601To1970 = 116444736000000000LL;  // in FILETIME's 100 ns
  const auto since_1970 = duration_cast<duration<std::int64_t, std::ratio<1, 10000000>>>(
      fs::file_time_type::clock::to_sys(when).time_since_epoch());
  const auto ticks = static_cast<std::uint64_t>(since_1970.count() + kFrom1601To1970);
  FILETIME written{static_cast<DWORD>(ticks), static_cast<DWORD>(ticks >> 32)};
  return SetFileTime(h.get(), nullptr, nullptr, &written) != 0;
}

std::optional<FileIdentity> identity_of(const fs::path& path) {
  win32::Handle h(CreateFileW(path.wstring().c_str(), FILE_READ_ATTRIBUTES, kShareAll, nullptr, OPEN_EXISTING,
                              FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  if (!h) return std::nullopt;
  BY_HANDLE_FILE_INFORMATION info = {};
  FILE_BASIC_INFO basic = {};
  if (!GetFileInformationByHandle(h.get(), &info) ||
      !GetFileInformationByHandleEx(h.get(), FileBasicInfo, &basic, sizeof basic) ||
      (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0)
    return std::nullopt;
  return FileIdentity{
      info.dwVolumeSerialNumber,
      (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow,
      static_cast<std::int64_t>((static_cast<std::uint64_t>(info.nFileSizeHigh) << 32) | info.nFileSizeLow),
      nanoseconds(basic.LastWriteTime),
      nanoseconds(basic.ChangeTime),
      info.nNumberOfLinks};
}

}  // namespace fabuild
