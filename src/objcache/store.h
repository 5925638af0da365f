#pragma once

// The cache on disk, shared by every compile of every cell, on this machine and in its
// containers (the directory is mounted at its own path):
//
//   <dir>/CACHEDIR.TAG             so that backup tools skip it
//   <dir>/compilers/<hex>          a compiler's --version output, by path, size and mtime
//   <dir>/manifests/<xx>/<hex>     by key: which headers each stored result was compiled from
//   <dir>/results/<xx>/<hex>       an object with the compiler's stdout and stderr
//   <dir>/tmp/                     files being written
//
// Every file appears whole or not at all (written to tmp/, then renamed). A result carries the
// SHA-256 of its content and is checked before use: a damaged one is removed and counts as a
// miss. Manifests are read without a lock (a rename replaces them whole) and rewritten under
// an flock(2) of their directory, so concurrent writers keep each other's entries.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/expected.h"
#include "util/read_whole.h"

namespace fabuild::objcache {

struct Result {
  std::string object;
  std::string out;  // the compiler's stdout
  std::string err;  // and stderr (warnings), replayed on a hit
};

// One way the key's compile was done: the files it read and what they held.
struct ManifestEntry {
  std::string result;                                     // hex key of the result
  std::vector<std::pair<std::string, std::string>> deps;  // (recorded path, sha256 hex), depfile order
  std::vector<std::string> shadowed;                      // shadow candidates that existed when stored
};

constexpr std::size_t kMaxManifestEntries = 16;

// What the store holds under a key. A file that is there but damaged reads as nothing, with
// `damaged` set, so that a miss can say why.
struct StoredManifest {
  std::vector<ManifestEntry> entries;  // newest first; empty when there is none
  bool damaged = false;
};
struct StoredResult {
  std::optional<Result> result;  // nullopt when absent or damaged
  bool damaged = false;          // a damaged result is removed
};

class Store {
 public:
  explicit Store(std::filesystem::path dir);

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  // Makes the directory layout if missing; a Failure when it cannot.
  [[nodiscard]] Expected<void> prepare() const;

  // Entries newest first; none when there is no manifest or it is not readable (`damaged`).
  [[nodiscard]] StoredManifest manifest(const std::string& key) const;
  // Puts `entry` first, drops an older one with the same result and the oldest beyond
  // kMaxManifestEntries; a Failure when the manifest cannot be locked or written.
  [[nodiscard]] Expected<void> add_to_manifest(const std::string& key, const ManifestEntry& entry) const;

  // Nothing when absent; a damaged result is removed and said (`damaged`).
  [[nodiscard]] StoredResult result(const std::string& key) const;
  // Returns the bytes written; a Failure when it cannot write them (a full disk).
  [[nodiscard]] Expected<std::uint64_t> put_result(const std::string& key, const Result& result) const;
  // A result file as another machine's cache holds it (the remote tier): written when it is a
  // whole, intact result, else refused (false); a Failure when it cannot be written.
  [[nodiscard]] Expected<bool> adopt_result(const std::string& key, const std::string& content) const;
  // Adds the entries the manifest does not have yet, after its own, up to kMaxManifestEntries;
  // returns how many it added, or a Failure when the manifest cannot be locked or written.
  [[nodiscard]] Expected<std::size_t> merge_manifest(const std::string& key,
                                                     const std::vector<ManifestEntry>& more) const;
  // Marks a result and its manifest as just used, for least-recently-used trimming.
  void touch(const std::string& manifest_key, const std::string& result_key) const;

  // A temporary file name under tmp/ (not created).
  [[nodiscard]] std::filesystem::path temp_path(const std::string& stem) const;

  [[nodiscard]] std::filesystem::path manifest_path(const std::string& key) const;
  [[nodiscard]] std::filesystem::path result_path(const std::string& key) const;

 private:
  [[nodiscard]] Expected<void> write_manifest(const std::filesystem::path& path,
                                              const std::vector<ManifestEntry>& entries) const;
  std::filesystem::path dir_;
};

// A manifest file's entries; nullopt when it is not one (damaged, or not JSON).
std::optional<std::vector<ManifestEntry>> parse_manifest(std::string_view text);
// A result file's parts, checked against the SHA-256 it carries; nullopt when it is damaged.
std::optional<Result> parse_result(std::string_view text);

// Writes `content` to `path` through a temporary file in `tmp_dir` and a rename, making its
// directory if missing.
[[nodiscard]] Expected<void> write_whole(const std::filesystem::path& path, const std::string& content,
                                         const std::filesystem::path& tmp_dir);

struct TrimReport {
  std::uint64_t bytes_before = 0;
  std::uint64_t bytes_after = 0;
  std::size_t files_removed = 0;
};

// Removes the least recently used manifests and results until the cache holds at most 90 % of
// `max_bytes` (nothing when it holds no more than `max_bytes`), and temporary files older than
// an hour (left by killed compiles).
TrimReport trim(const std::filesystem::path& dir, std::uint64_t max_bytes);
// What the manifests and results take on disk.
std::uint64_t cache_size(const std::filesystem::path& dir);

}  // namespace fabuild::objcache
