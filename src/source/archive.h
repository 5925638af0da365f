#pragma once

// Unpacking a downloaded sdist (tar.gz, tar, zip) without trusting it: an archive is input from
// the network, and one crafted entry must not write outside the build tree or fill the disk.

#include <cstdint>
#include <filesystem>

#include "util/expected.h"

namespace fabuild {

// flash-attn's sdist unpacks to a few hundred MB at most; these leave an order of magnitude.
inline constexpr std::uint64_t kMaxExtractedBytes = std::uint64_t{4} << 30;  // 4 GiB
inline constexpr std::uint64_t kMaxArchiveEntries = 200000;

// ...and no more than this many times the archive's own size, plus kRatioAllowance: a real
// sdist packs 5-60 to one (FlashAttention's: 8 MB to a few hundred), a bomb of zeros a
// thousand to one and more.
inline constexpr std::uint64_t kMaxExpansionRatio = 200;
inline constexpr std::uint64_t kRatioAllowance = std::uint64_t{64} << 20;  // 64 MiB: tiny archives

struct ExtractLimits {
  std::uint64_t max_total_bytes = kMaxExtractedBytes;  // uncompressed, all entries together
  std::uint64_t max_entries = kMaxArchiveEntries;
  std::uint64_t max_ratio = kMaxExpansionRatio;  // 0: no ratio cap
};

// Extracts `archive_path` into `dest_dir`, which must not exist yet (or be an empty directory).
// Only regular files, directories, and links that stay inside `dest_dir` are allowed; absolute
// paths, ".." components, links that leave the tree (directly or through other links), device
// files, fifos and sockets are refused, as is an archive that expands past `limits` (counted
// while streaming, so a lying header does not help). Extraction happens in a hidden sibling
// directory renamed to `dest_dir` only on success: a refused archive leaves nothing behind.
// A Failure names the archive and the offending entry, and says what to do.
Expected<void> extract_archive(const std::filesystem::path& archive_path, const std::filesystem::path& dest_dir,
                               const ExtractLimits& limits = {});

// The one top-level directory of an extracted sdist (dest_dir/flash_attn-2.8.3); a Failure when
// there is not exactly one, listing what is there.
Expected<std::filesystem::path> sdist_root(const std::filesystem::path& dest_dir);

}  // namespace fabuild
