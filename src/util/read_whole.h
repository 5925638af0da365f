#pragma once

// A whole file read into memory: manifests, reports, stamps, cgroup files, compiler outputs.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace fabuild {

// The file's bytes, or nullopt when it cannot be opened or read.
std::optional<std::string> read_whole(const std::filesystem::path& path);

// The file's bytes from `offset` on, at most its last `most` bytes (a log's tail); "" when it
// cannot be read or holds nothing past `offset`.
std::string read_tail(const std::filesystem::path& path, std::uintmax_t offset, std::uintmax_t most);

}  // namespace fabuild
