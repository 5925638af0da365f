#pragma once

// The filesystem as the app layer reaches it (app/system.h: System::files), as ninja's builder
// reaches the disk through its DiskInterface: the few things app itself does to files and
// directories, behind one interface, with RealFiles over std::filesystem and util's own file
// calls here, and an in-memory fake for app's unit tests (tests/support/fake_files.h). An effect
// that can fail returns Expected (util/expected.h): a Failure saying what could not be done to
// which path and why. What the lower layers do to files (wheel/filing, source/archive, the
// publish layer) stays theirs.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"
#include "util/file.h"
#include "util/hash.h"

namespace fabuild {

class Files {
 public:
  // What a path names, symbolic links followed; kNone when nothing is there (or it cannot be told).
  enum class Kind { kNone, kFile, kDirectory, kOther };

  virtual ~Files() = default;

  [[nodiscard]] virtual Kind kind(const std::filesystem::path& path) const = 0;
  [[nodiscard]] bool exists(const std::filesystem::path& path) const { return kind(path) != Kind::kNone; }
  [[nodiscard]] bool is_file(const std::filesystem::path& path) const { return kind(path) == Kind::kFile; }
  [[nodiscard]] bool is_directory(const std::filesystem::path& path) const { return kind(path) == Kind::kDirectory; }
  // Whether `path` itself is a symbolic link (kind() sees what it points to).
  [[nodiscard]] virtual bool is_link(const std::filesystem::path& path) const = 0;

  // What tells the file at `path` apart from a new one under its name (util/file.h's
  // FileIdentity); nullopt when it is not a regular file.
  [[nodiscard]] virtual std::optional<FileIdentity> identity(const std::filesystem::path& path) const = 0;
  // The entries of a directory (their full paths), in order of name.
  [[nodiscard]] virtual Expected<std::vector<std::filesystem::path>> list(const std::filesystem::path& dir) const = 0;
  // The regular files below `dir`, at any depth, in order of path; a directory `skip` says yes to
  // (none when it is empty) is not entered, nor a symbolic link to one.
  [[nodiscard]] virtual Expected<std::vector<std::filesystem::path>> files_under(
      const std::filesystem::path& dir, const std::function<bool(const std::filesystem::path&)>& skip) const = 0;
  // A whole file's bytes.
  [[nodiscard]] virtual Expected<std::string> read(const std::filesystem::path& path) const = 0;
  // A file's SHA-256 (by default of what read() gives; the real files stream it, holding no more
  // than a buffer of it at once).
  [[nodiscard]] virtual Expected<Sha256> sha256(const std::filesystem::path& path) const;
  // A file's bytes from `offset` to its end ("" when it is no longer): what a writer added since
  // a reader's last look (a cell's compile tally), without reading the rest again.
  [[nodiscard]] virtual Expected<std::string> read_from(const std::filesystem::path& path,
                                                        std::uint64_t offset) const = 0;
  // Replaces `path` with `bytes` whole, or leaves it as it was (util/file.h's write_whole_file:
  // a temporary file beside it, on the disk before it is renamed over the name).
  virtual Expected<void> write(const std::filesystem::path& path, std::string_view bytes) = 0;
  // Adds `bytes` at the end of `path`, made if missing: a line in a cell's log.
  virtual Expected<void> append(const std::filesystem::path& path, std::string_view bytes) = 0;
  // Makes `dir` and the directories above it that are missing; one that is there is fine.
  virtual Expected<void> create_directories(const std::filesystem::path& dir) = 0;
  // Gives `from` the name `to` (a file or a directory), replacing a file there.
  virtual Expected<void> rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // Copies the file or the tree `from` to `to`, which must not be there yet; symbolic links are
  // copied as links.
  virtual Expected<void> copy(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // Removes a file or an empty directory; false when nothing was there.
  virtual Expected<bool> remove(const std::filesystem::path& path) = 0;
  // Removes `path` and everything under it; how many entries went (0 when nothing was there).
  virtual Expected<std::uintmax_t> remove_all(const std::filesystem::path& path) = 0;
  // Sets the time `path` was last written to now: how a cache entry is marked used
  // (util/entry_cache.h).
  virtual Expected<void> touch(const std::filesystem::path& path) = 0;
  // `path` absolute, with "." and "..", and the symbolic links of the part of it that exists,
  // resolved (std::filesystem::weakly_canonical): one name for one directory in a key or a mount.
  [[nodiscard]] virtual Expected<std::filesystem::path> resolve(const std::filesystem::path& path) const = 0;
  // Lets everyone read and run the file `path`, and its owner write it (rwxr-xr-x); nothing to do
  // on Windows.
  virtual Expected<void> make_executable(const std::filesystem::path& path) = 0;
  // Makes `link` a symbolic link to `target` (a path from link's directory), in one step: a link
  // beside it renamed over whatever `link` was.
  virtual Expected<void> link(const std::filesystem::path& target, const std::filesystem::path& link) = 0;
  // Gives the directory `dir` and everything under it fixed modes, whoever made them under
  // whatever umask: a file rw-r--r--, or rwxr-xr-x when anyone may run it (all a git tree or a
  // wheel means by a mode), a directory rwxr-xr-x; symbolic links are left as they are, and not
  // followed. How many entries changed. Nothing to do on Windows.
  virtual Expected<std::size_t> fix_modes(const std::filesystem::path& dir) = 0;
};

// This machine's files.
class RealFiles final : public Files {
 public:
  [[nodiscard]] Kind kind(const std::filesystem::path& path) const override;
  [[nodiscard]] bool is_link(const std::filesystem::path& path) const override;
  [[nodiscard]] std::optional<FileIdentity> identity(const std::filesystem::path& path) const override;
  [[nodiscard]] Expected<std::vector<std::filesystem::path>> list(const std::filesystem::path& dir) const override;
  [[nodiscard]] Expected<std::vector<std::filesystem::path>> files_under(
      const std::filesystem::path& dir, const std::function<bool(const std::filesystem::path&)>& skip) const override;
  [[nodiscard]] Expected<std::string> read(const std::filesystem::path& path) const override;
  [[nodiscard]] Expected<Sha256> sha256(const std::filesystem::path& path) const override;
  [[nodiscard]] Expected<std::string> read_from(const std::filesystem::path& path, std::uint64_t offset) const override;
  Expected<void> write(const std::filesystem::path& path, std::string_view bytes) override;
  Expected<void> append(const std::filesystem::path& path, std::string_view bytes) override;
  Expected<void> create_directories(const std::filesystem::path& dir) override;
  Expected<void> rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  Expected<void> copy(const std::filesystem::path& from, const std::filesystem::path& to) override;
  Expected<bool> remove(const std::filesystem::path& path) override;
  Expected<std::uintmax_t> remove_all(const std::filesystem::path& path) override;
  Expected<void> touch(const std::filesystem::path& path) override;
  [[nodiscard]] Expected<std::filesystem::path> resolve(const std::filesystem::path& path) const override;
  Expected<void> make_executable(const std::filesystem::path& path) override;
  Expected<void> link(const std::filesystem::path& target, const std::filesystem::path& link) override;
  Expected<std::size_t> fix_modes(const std::filesystem::path& dir) override;
};

}  // namespace fabuild
