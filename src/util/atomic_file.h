#pragma once

// Files in the wheelhouse appear whole or not at all (as ccache's AtomicFile does it): bytes
// go to a temporary file in the same directory, which is renamed over the final name only
// once it is complete and on disk (util/file.h: rename(2), or MoveFileExW replacing the old
// file on Windows). A reader, or a run killed halfway, never sees a half file.

#include <filesystem>
#include <string>
#include <string_view>

#include "util/dir_lock.h"
#include "util/file.h"

namespace fabuild {

class AtomicFile {
 public:
  // Creates ".<name>.tmp.XXXXXX" next to `path`; its directory must exist. The Failure says
  // which file could not be created and why.
  [[nodiscard]] static Expected<AtomicFile> create(std::filesystem::path path);
  explicit AtomicFile(std::filesystem::path path);  // throws the UserError that create's Failure is
  AtomicFile(AtomicFile&& other) noexcept;
  // Removes the temporary file unless commit() succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile& operator=(AtomicFile&&) = delete;

  void write(std::string_view bytes);  // throws the UserError that try_write's Failure is
  [[nodiscard]] Expected<void> try_write(std::string_view bytes) { return file_.write(bytes); }
  // Flushes to disk, renames over the final name (replacing any file there in one step) and
  // syncs the directory so that the rename survives a crash.
  [[nodiscard]] Expected<void> try_commit();
  void commit();  // throws the UserError that try_commit's Failure is

  [[nodiscard]] const std::filesystem::path& temp_path() const { return temp_; }

 private:
  AtomicFile(std::filesystem::path path, std::filesystem::path temp, File file)
      : path_(std::move(path)), temp_(std::move(temp)), file_(std::move(file)) {}
  std::filesystem::path path_;
  std::filesystem::path temp_;
  File file_;
  bool committed_ = false;
};

void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Puts the entry of `dir` in its parent on disk (fsync of the parent), so that a directory just
// made survives a power cut. Best effort: durability only.
void sync_parent_directory(const std::filesystem::path& dir);

// DirLock (util/dir_lock.h) guards concurrent cells filing into one directory (or one
// manifest): they take turns at read-merge-write, so none loses another's update.
}  // namespace fabuild
