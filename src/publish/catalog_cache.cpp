#include "publish/catalog_cache.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "util/atomic_file.h"
#include "util/json_read.h"
#include "util/read_whole.h"

namespace fabuild {

namespace fs = std::filesystem;
using nlohmann::json;

std::int64_t file_mtime_ns(const fs::path& path) {
  std::error_code ec;
  const auto t = fs::last_write_time(path, ec);
  return ec ? -1 : static_cast<std::int64_t>(t.time_since_epoch().count());
}

std::map<std::string, CatalogCacheEntry> load_catalog_cache(const fs::path& file) {
  const std::optional<std::string> text = read_whole(file);
  const std::optional<json> doc = text ? parse_json(*text) : std::nullopt;
  const auto wheels = doc ? json_field<json>(*doc, "wheels") : std::nullopt;
  if (!wheels || !wheels->is_object()) return {};
  std::map<std::string, CatalogCacheEntry> cache;
  for (const auto& [path, j] : wheels->items()) {
    const auto size = json_field<std::uint64_t>(j, "size");
    const auto mtime = json_field<std::int64_t>(j, "mtime_ns");
    const auto metadata_size = json_field<std::uint64_t>(j, "metadata_size");
    const auto sha256 = json_field<std::string>(j, "sha256");
    const auto metadata_sha256 = json_field<std::string>(j, "metadata_sha256");
    const auto requires_python = json_field<std::string>(j, "requires_python");
    const auto project = json_field<std::string>(j, "project");
    const auto label_in_file_only = json_field<bool>(j, "label_in_file_only");  // older caches: read again
    if (!size || !mtime || !metadata_size || !sha256 || !metadata_sha256 || !requires_python || !project ||
        !label_in_file_only) {
      return {};
    }
    CatalogCacheEntry e;
    e.size = *size;
    e.mtime = *mtime;
    e.metadata_size = *metadata_size;
    e.wheel.sha256 = *sha256;
    e.wheel.metadata_sha256 = *metadata_sha256;
    e.wheel.requires_python = *requires_python;
    e.wheel.project = *project;
    e.wheel.label_in_file_only = *label_in_file_only;
    cache[path] = e;
  }
  return cache;
}

void save_catalog_cache(const fs::path& file, const std::map<std::string, CatalogCacheEntry>& cache) {
  json wheels = json::object();
  for (const auto& [path, e] : cache) {
    wheels[path] = json{{"size", e.size},
                        {"mtime_ns", e.mtime},
                        {"metadata_size", e.metadata_size},
                        {"sha256", e.wheel.sha256},
                        {"metadata_sha256", e.wheel.metadata_sha256},
                        {"requires_python", e.wheel.requires_python},
                        {"project", e.wheel.project},
                        {"label_in_file_only", e.wheel.label_in_file_only}};
  }
  write_file_atomically(file, json{{"wheels", wheels}}.dump(1) + "\n");
}

}  // namespace fabuild
