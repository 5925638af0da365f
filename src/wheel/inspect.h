#pragma once

// What is inside a .whl, read with libarchive without extracting anything: its members with
// their sizes and SHA-256, and the .dist-info files. A wheel comes from a build we do not
// trust to be well formed, so reading it refuses, with an error, what could hurt the reader
// or whoever installs it: a file that is not a zip, member paths that escape the install
// root, duplicate members, two .dist-info directories, or more bytes than a cap (zip bombs).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"
#include "wheel/dist_info.h"

namespace fabuild {

struct WheelMember {
  std::string path;    // "flash_attn/__init__.py", as stored in the zip
  std::uint64_t size;  // uncompressed bytes actually read
  std::string sha256;  // urlsafe base64 without padding, as RECORD spells it
};

struct InspectLimits {
  // Uncompressed bytes over all members. FlashAttention wheels are a few hundred MiB; a zip
  // that inflates past this is broken or hostile.
  std::uint64_t max_total_bytes = std::uint64_t{4} << 30;
  // Each METADATA, WHEEL or RECORD is held in memory to be parsed.
  std::uint64_t max_dist_info_file_bytes = std::uint64_t{16} << 20;
  std::size_t max_members = 100000;
};

struct WheelContents {
  std::vector<WheelMember> members;  // regular files, in archive order; directories left out
  std::string dist_info;             // "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE.dist-info"

  // The .dist-info files, parsed; absent when the wheel lacks the file.
  std::optional<Headers> metadata;  // Name, Version, ...
  std::string metadata_text;        // METADATA byte for byte, for an index to serve (PEP 658)
  std::optional<Headers> wheel;     // Wheel-Version, Root-Is-Purelib, Tag, ...
  std::optional<Record> record;

  [[nodiscard]] const WheelMember* find(const std::string& path) const;
  // "<dist_info>/<file>"
  [[nodiscard]] std::string dist_info_path(const std::string& file) const;
  // WHEEL's Tag lines, compressed tag sets expanded; empty without a WHEEL file.
  [[nodiscard]] std::vector<std::string> tags() const;
  // WHEEL's Root-Is-Purelib; nullopt when missing or neither "true" nor "false".
  [[nodiscard]] std::optional<bool> root_is_purelib() const;
};

// A Failure for anything refused above, or when it cannot be read; the caller names the wheel.
[[nodiscard]] Expected<WheelContents> inspect_wheel(const std::filesystem::path& wheel,
                                                    const InspectLimits& limits = {});

// A member path safe to install, or why not: absolute, a drive letter, a backslash, or an
// empty, "." or ".." component.
Expected<void> safe_member_path(const std::string& path);

}  // namespace fabuild
