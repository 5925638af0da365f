#pragma once

// Files through the system's own handles, for what std::fstream cannot do: put bytes on the
// disk, truncate, lock, create a name that must be new, replace another file in one step.
// file_posix.cpp and file_win32.cpp hold the calls. What the system refuses is a Failure
// (util/expected.h) saying what could not be done to which file and why: "cannot open
// /w/x.part: Permission denied". Nothing here uses fmt or spdlog: fabuild-cc, which links only a
// few of util's files, uses it too.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace fabuild {

class File {
 public:
  enum class Mode {
    kAppend,     // write-only, created if missing; every write lands at the end
    kReadWrite,  // created if missing, kept as it is
    kCreateNew,  // write-only; fails when the name exists (a temporary file's name must be its own)
  };

  File() = default;
  [[nodiscard]] static Expected<File> open(const std::filesystem::path& path, Mode mode);
  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  [[nodiscard]] bool is_open() const { return native_ != kNone; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  [[nodiscard]] Expected<void> write(std::string_view bytes);  // all of them
  [[nodiscard]] Expected<void> sync();                         // to the disk (fsync; FlushFileBuffers)
  [[nodiscard]] Expected<void> truncate();                     // to nothing, writing again from the start
  [[nodiscard]] std::uint64_t size() const;                    // 0 when it cannot be told
  // Closes it, reporting an error the close finds (a full disk, NFS), unlike the destructor.
  [[nodiscard]] Expected<void> close();

  // An exclusive lock, held until the file is closed; the holder's death drops it, however it
  // dies. Windows' locks bar other handles from the bytes they cover, so the lock covers one
  // byte far past any content: what the file says stays readable to those it turns away.
  [[nodiscard]] Expected<bool> try_lock();  // false: another process holds it
  [[nodiscard]] Expected<void> lock();      // waits for it
  // A shared lock on the same byte: any number of holders at once, none while an exclusive
  // one is held (those who use a cache entry, against one who removes it).
  [[nodiscard]] Expected<bool> try_lock_shared();  // false: another process holds it exclusively

 private:
  friend Expected<File> create_temp_beside(const std::filesystem::path& path, std::filesystem::path& temp);
  File(std::filesystem::path path, std::intptr_t native) : path_(std::move(path)), native_(native) {}
  static constexpr std::intptr_t kNone = -1;
  void release() noexcept;
  std::filesystem::path path_;
  std::intptr_t native_ = kNone;          // the descriptor (POSIX) or the HANDLE (Windows)
  [[maybe_unused]] bool append_ = false;  // Windows: every write goes to the end (kAppend)
};

// Creates ".<name>.tmp.XXXXXX" (six random letters and digits) next to `path`, in its directory,
// which must exist; `temp` gets its path.
[[nodiscard]] Expected<File> create_temp_beside(const std::filesystem::path& path, std::filesystem::path& temp);

// A new empty directory "<prefix>XXXXXX" (six random letters and digits, as mkdtemp makes) in
// `in`, or in the system's temporary directory.
[[nodiscard]] Expected<std::filesystem::path> make_temp_directory(const std::string& prefix,
                                                                  const std::filesystem::path& in = {});

// Renames `from` over `to` in one step, replacing a file there, and on the disk when it returns:
// rename(2) (then see sync_directory); MoveFileExW with MOVEFILE_REPLACE_EXISTING and
// MOVEFILE_WRITE_THROUGH on Windows, where std::filesystem::rename may refuse to replace.
[[nodiscard]] Expected<void> replace_file(const std::filesystem::path& from, const std::filesystem::path& to);
// The same, but false instead of a Failure when the two are on different file systems, where no
// rename is one step (EXDEV; ERROR_NOT_SAME_DEVICE): the caller copies instead.
[[nodiscard]] Expected<bool> replace_file_on_same_device(const std::filesystem::path& from,
                                                         const std::filesystem::path& to);

// Renames the directory `from` to `to`, which may be an empty directory (rename(2) replaces it;
// Windows' MoveFileExW cannot, so it is removed first).
[[nodiscard]] Expected<void> rename_directory(const std::filesystem::path& from, const std::filesystem::path& to);

// The one way fabuild writes a whole file that others may read meanwhile: `content` goes to a
// temporary file (create_temp_beside: next to `path`, or in `temp_dir` on the same file system)
// that is renamed over `path` (replace_file) only once complete, so a reader, or a writer killed
// halfway, never leaves a half file. `durable`: on the disk before the rename, and the rename
// too (the wheelhouse's files); without it, as fast as the page cache (a cache's objects, which
// a lost write only makes a miss). util/atomic_file.h streams into one; the object cache writes
// its objects and a hit's outputs with this.
[[nodiscard]] Expected<void> write_whole_file(const std::filesystem::path& path, std::string_view content,
                                              const std::filesystem::path& temp_dir = {}, bool durable = false);

// The bytes of the regular files at or under `path` (symbolic links not followed); 0 for
// what cannot be read.
std::uint64_t bytes_under(const std::filesystem::path& path);

// The bytes an unprivileged writer may still put on the disk that holds `path` (its nearest
// existing ancestor when it does not exist yet); UINT64_MAX when that cannot be told.
std::uint64_t free_bytes(const std::filesystem::path& path);

// Puts the entries of `dir` (a rename or a new file in it) on the disk: fsync(2) of the
// directory. Windows has no such call; MOVEFILE_WRITE_THROUGH did it for the rename. Best effort.
void sync_directory(const std::filesystem::path& dir);

// Sets the time a file or a directory was last written (what trimming by last use reads); false
// when it cannot. std::filesystem::last_write_time cannot set a directory's on Windows.
bool set_last_write_time(const std::filesystem::path& path, std::filesystem::file_time_type when);

// What tells a file apart from a new one under the same name: device and inode (Windows: volume
// serial number and file index), size, and the nanoseconds of its last change of content and of
// its metadata. nullopt when `path` is not a regular file.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = 0;
  std::int64_t modified_ns = 0;
  std::int64_t changed_ns = 0;
  std::uint64_t links = 1;  // its names (hard links)
};
std::optional<FileIdentity> identity_of(const std::filesystem::path& path);

}  // namespace fabuild
