#pragma once

// What the catalog remembers of each wheel between runs (WHEELHOUSE/.catalog-cache.json): its
// digest and METADATA's, keyed by path, size and modification time, so that an unchanged wheel
// is not read again. An optimisation: a cache that cannot be read is ignored and rewritten.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "publish/catalog.h"

namespace fabuild {

// In the file clock's own ticks: only ever compared with itself; -1 when it cannot be read.
std::int64_t file_mtime_ns(const std::filesystem::path& path);

struct CatalogCacheEntry {
  std::uint64_t size = 0;
  std::int64_t mtime = 0;
  std::uint64_t metadata_size = 0;
  CatalogWheel wheel;
};

// By the wheel's path in the wheelhouse; empty when the file is absent or damaged.
std::map<std::string, CatalogCacheEntry> load_catalog_cache(const std::filesystem::path& file);
void save_catalog_cache(const std::filesystem::path& file, const std::map<std::string, CatalogCacheEntry>& cache);

}  // namespace fabuild
