#pragma once

// The caches beside the object cache (docs/performance.md, "The other caches"): unpacked sources,
// downloads, CUDA toolkits from PyPI and Python environments. Each is a directory of entries
// (one subdirectory or file each); a run that uses an entry marks it used (its mtime, which
// nothing else changes once the entry is made), and after a run each cache is trimmed as the
// object cache is: entries unused for longer than its age limit go, then the least recently
// used ones until it fits its size limit. An entry that a live run makes or uses is never
// removed (util/entry_lock.h), nor one used within the last day.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace fabuild {

struct EntryCacheLimits {
  std::uint64_t max_bytes = 0;         // 0 = no size limit
  std::chrono::hours max_age{0};       // 0 = no age limit
  std::chrono::hours keep_recent{24};  // never removed when used this recently
};

struct EntryCacheReport {
  std::size_t entries = 0;  // after the trim
  std::uint64_t bytes = 0;  // after the trim
  std::size_t removed = 0;
  std::uint64_t removed_bytes = 0;
};

// Marks `entry` used now. Errors are ignored: a mark that fails only makes the entry older.
void mark_used(const std::filesystem::path& entry);

// Trims `dir` to `limits` at `now`; a directory that does not exist is an empty cache. Entries
// whose name starts with '.' (staging, locks) are neither counted nor removed.
EntryCacheReport trim_entry_cache(const std::filesystem::path& dir, const EntryCacheLimits& limits,
                                  std::filesystem::file_time_type now = std::filesystem::file_time_type::clock::now());

}  // namespace fabuild
