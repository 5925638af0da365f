#pragma once

// A library cell's installed tree (docs/library.md) packed as the .tar.gz that is filed, and read
// back. The same files give the same bytes wherever and whenever they are packed: entries in
// path order, owner and group 0 with no names, modes 0755 (directories, executables) or 0644,
// one fixed modification time, symbolic links kept as links (libflash_attn.so -> .so.1), and a
// gzip header without a name or time. Written with libarchive.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "util/expected.h"

namespace fabuild {

// 2000-01-01T00:00:00Z: every entry's modification time.
inline constexpr std::int64_t kLibraryArchiveMtime = 946684800;

// Packs everything under `dir` as `out`, each path under one top directory `top`
// ("flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64/lib/libflash_attn.so"). Only regular
// files, directories and symbolic links that stay inside `dir` are packed; anything else is an
// error. The Failure names the file and says what could not be done to it, and why; `out`
// appears whole or not at all.
[[nodiscard]] Expected<void> pack_library_archive(const std::filesystem::path& dir, const std::string& top,
                                                  const std::filesystem::path& out);

// What an archive holds, in its order.
struct ArchiveMember {
  std::string path;
  enum class Kind { kFile, kDirectory, kSymlink, kOther } kind = Kind::kOther;
  std::string link;  // a symbolic link's target
  std::uint64_t size = 0;
  int mode = 0;  // permission bits
  std::int64_t mtime = 0;
  std::int64_t uid = 0;
  std::int64_t gid = 0;
};
// A Failure naming a file libarchive cannot read.
[[nodiscard]] Expected<std::vector<ArchiveMember>> list_archive(const std::filesystem::path& archive);

}  // namespace fabuild
