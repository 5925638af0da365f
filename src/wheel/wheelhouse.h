#pragma once

// Filing a verified wheel into its wheelhouse directory, and the SHA256SUMS beside it that
// lets users check a download with `sha256sum -c`. The directory is never seen in a state
// where a wheel is half written or SHA256SUMS misses a wheel that is there. A library cell's
// archive (.tar.gz, docs/library.md) is filed the same way; "wheel" below stands for either.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace fabuild {

inline constexpr const char* kSha256SumsName = "SHA256SUMS";

// What to check when a write into the wheelhouse fails.
inline constexpr const char* kWheelhouseWriteHint = "check that the wheelhouse is writable and its disk is not full";
// A write's Failure, which names its file already, with that hint.
inline tl::unexpected<Failure> wheelhouse_write_failure(const Failure& f) { return fail(f.what, kWheelhouseWriteHint); }

// Whether a file of that name is one fabuild files: a wheel (.whl) or a library archive (.tar.gz).
bool is_filed_name(std::string_view name);

// A SHA256SUMS file as file_wheel writes it ("<64 hex>  <name>" per line, sha256sum's format):
// wheel name -> hex digest. Other lines are skipped; a missing file is empty. A Failure when it
// cannot be read, or something else is in its place (a directory): fabuild replaces no such
// thing, which it did not write; the Failure says to remove it.
[[nodiscard]] Expected<std::map<std::string, std::string>> read_sha256sums(const std::filesystem::path& file);

enum class Transfer {
  kMove,  // rename the staged file (copy, then remove it, when it lives on another filesystem)
  kCopy,  // leave the staged file where it is
};

struct FiledFile {
  std::filesystem::path path;  // dest_dir / the staged file's name
  std::string sha256;          // hex
  std::uint64_t size = 0;
};

// Puts `staged` into `dest_dir` (created if missing) under its own file name, then rewrites
// the directory's SHA256SUMS, both under a lock on the directory so that cells filing into it
// at once take turns. A file already there under that name, even with other content, is
// replaced in a single rename: readers see the old wheel or the new one, never a mix.
// A Failure names the path, and what to check, when the file system refuses.
[[nodiscard]] Expected<FiledFile> file_wheel(const std::filesystem::path& staged, const std::filesystem::path& dest_dir,
                                             Transfer how = Transfer::kMove);

// Rewrites dir/SHA256SUMS from scratch: one "<hex>  <name>" line per .whl (or .tar.gz) in `dir`, sorted
// by name, each wheel read in full. For repairs; file_wheel keeps it current cheaply.
[[nodiscard]] Expected<void> write_sha256sums(const std::filesystem::path& dir);

// For a caller that holds DirLock(dir) while it puts files there itself (merging wheelhouses):
// makes dir/SHA256SUMS cover exactly the wheels in `dir`, each digest taken from `known`
// (name -> hex), else from the current SHA256SUMS, else from reading the wheel. Leaves the
// file alone when that changes nothing; returns whether it wrote it.
[[nodiscard]] Expected<bool> update_sha256sums_locked(const std::filesystem::path& dir,
                                                      const std::map<std::string, std::string>& known);

}  // namespace fabuild
