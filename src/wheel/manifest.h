#pragma once

// manifest.json at the wheelhouse root: which wheel each cell filed, its digest and size, how
// long it took and what built it. A re-run reads it to tell a cell whose wheel is filed and
// intact from one that must be built again.
//
//   {"cells": {"<cell id>": {"wheel": "fa2.8.3/torch2.8/cu128/flash_attn-...whl",
//                            "sha256": "<hex>", "size": 123, "build_seconds": 61.5,
//                            "versions": {"nvcc": "12.8.93", "python": "3.12.7", ...}}}}

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace fabuild {

inline constexpr const char* kManifestName = "manifest.json";

struct FiledWheel {
  std::string wheel;  // relative to the wheelhouse, "/"-separated
  std::string sha256; // hex
  std::uint64_t size = 0;
  double build_seconds = 0;
  std::map<std::string, std::string> versions;  // free-form: nvcc, compiler, python, torch, ...

  bool operator==(const FiledWheel&) const = default;
};

// Adds or replaces one cell's entry and keeps every other cell (and any key fabuild does not
// know), under a lock on the wheelhouse so that concurrent cells do not lose each other's
// entries; the file is replaced whole. A manifest that is not valid is an error naming it
// (with line and column for bad JSON) and is left untouched, never silently discarded.
void record_filed(const std::filesystem::path& wheelhouse, const std::string& cell_id, const FiledWheel& entry);

// The cell's entry, or nullopt when the manifest or the entry does not exist. Throws
// UserError for a manifest that is not valid.
std::optional<FiledWheel> find_filed(const std::filesystem::path& wheelhouse, const std::string& cell_id);

enum class FiledState {
  kMissing,  // the wheel is not at the recorded path
  kIntact,   // it is there with the recorded size and sha256
  kChanged,  // it is there but different: rebuild (and never trust it)
};

// Reads the wheel in full to compare its digest.
FiledState check_filed(const std::filesystem::path& wheelhouse, const FiledWheel& entry);

}  // namespace fabuild
