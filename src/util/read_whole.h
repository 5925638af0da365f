#pragma once

// A whole file read into memory: manifests, reports, stamps, cgroup files, compiler outputs.

#include <filesystem>
#include <optional>
#include <string>

namespace fabuild {

// The file's bytes, or nullopt when it cannot be opened or read.
std::optional<std::string> read_whole(const std::filesystem::path& path);

}  // namespace fabuild
