#pragma once

// What a wheelhouse publishes: every wheel under it, read and checked once, with what an index
// needs of it (its digest, size, project, Requires-Python and the variant its directory says),
// and its METADATA written beside it as "<wheel>.metadata" (PEP 658) for installers to resolve
// without downloading the wheel.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "wheel/manifest.h"
#include "wheel/wheel_name.h"

namespace fabuild {

// Holds what reading each wheel found, keyed by path, size and modification time, so that
// publishing again reads only wheels that are new or changed.
inline constexpr const char* kCatalogCacheName = ".index-cache.json";
inline constexpr const char* kMetadataSuffix = ".metadata";

struct CatalogWheel {
  std::string path;  // relative to the wheelhouse, "/"-separated
  WheelName name;
  std::string project;  // METADATA's Name, PEP 503 normalised: "flash-attn"
  std::string sha256;   // hex, of the wheel
  std::uint64_t size = 0;
  std::string metadata_sha256;  // hex, of "<wheel>.metadata"
  std::string requires_python;  // METADATA's Requires-Python; "" when it has none
  // METADATA's Version lacks the file name's local label (`naming: upstream`, as FlashAttention
  // publishes): pip refuses such a wheel from an index (its metadata disagrees with the version
  // it was chosen as) but installs it by URL or as a file; uv installs it either way.
  bool label_in_file_only = false;
  // "cu128/torch2.8" for a wheel in "<package><version>/torch<series>/<cuXYZ|rocmX.Y|cpu>/",
  // the layout fabuild files into; "" for a wheel anywhere else (it is in the main index only).
  std::string variant;
  // The other variants a stable-ABI wheel serves (docs/stable-abi.md): "cu130/torch2.13" for each
  // torch release its manifest entry records it proven under ("cu132/torch2.15" too when that
  // torch is another CUDA build of the major); pip pointed at any of them finds this one file.
  std::vector<std::string> proven_variants;
  bool build_record = false;  // "<wheel>.build.json" beside it (wheel/build_record.h)

  [[nodiscard]] std::string file_name() const;
  [[nodiscard]] std::string dir() const;  // "fa2.8.3/torch2.8/cu128"; "" at the top
};

// A library cell's archive, in "<package><version>/lib/<cuXYZ>/<profile>/" (docs/library.md): on
// no pip index; the page shows it with its digest (from the SHA256SUMS beside it) and size.
struct CatalogLibrary {
  std::string path;  // relative to the wheelhouse, "/"-separated
  std::string sha256;
  std::uint64_t size = 0;
  [[nodiscard]] std::string file_name() const;
  [[nodiscard]] std::string dir() const;  // "fa3.0.0/lib/cu130/minimal"
};

// "cu128", "rocm6.2", "cpu": whether a wheelhouse directory's name is an accelerator's.
bool is_accelerator(std::string_view s);

// Whether a wheelhouse directory is a library cell's: "<package><version>/lib/<cuXYZ>/<profile>".
bool is_library_dir(const std::string& dir);

struct Catalog {
  std::vector<CatalogWheel> wheels;       // sorted by path
  std::vector<CatalogLibrary> libraries;  // sorted by path
  std::vector<std::string> left_out;      // "<path>: why", for wheels that cannot be published
  // SHA256SUMS files that disagreed with wheels their manifest entries vouch for, written again:
  // "<dir>/SHA256SUMS: its line for <wheel> said <hex>; ... rewritten".
  std::vector<std::string> repaired;
};

// Walks the wheelhouse (leaving out hidden directories, logs/ and the generated indexes),
// reads each wheel (inspect_wheel: a broken or hostile zip is left out, with the reason), and
// writes or refreshes "<wheel>.metadata" next to it; removes ".metadata" files whose wheel is
// gone. Throws UserError (exit 2) when the wheelhouse is not a directory.
Catalog catalog_wheelhouse(const std::filesystem::path& wheelhouse);
// The same, with the wheelhouse's manifest already read (wheel/manifest.h's read_manifest).
Catalog catalog_wheelhouse(const std::filesystem::path& wheelhouse, const std::map<std::string, FiledWheel>& manifest);

// The wheels under the wheelhouse as their file names say (path, name, project, variants),
// read no further and writing nothing: the pages an index of them would write, known before
// anything is (`fabuild index --adopt`). A wheel whose METADATA disagrees with its name is in
// it, and left out by catalog_wheelhouse.
Catalog catalog_by_name(const std::filesystem::path& wheelhouse, const std::map<std::string, FiledWheel>& manifest);

// The variant a wheelhouse directory stands for ("cu128/torch2.8"), or "" (see CatalogWheel).
std::string variant_of_dir(const std::string& dir);

}  // namespace fabuild
