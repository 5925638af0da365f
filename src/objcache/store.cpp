#include "objcache/store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "util/dir_lock.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/json_read.h"
#include "util/processes.h"

namespace fabuild::objcache {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view kResultMagic = "FABUILD-CC-RESULT 1\n";
constexpr int kManifestVersion = 1;

fs::path sharded(const fs::path& root, const std::string& key) { return root / key.substr(0, 2) / key.substr(2); }

json entry_json(const ManifestEntry& e) {
  json deps = json::array();
  for (const auto& [path, hash] : e.deps) deps.push_back(json::array({path, hash}));
  return json{{"result", e.result}, {"deps", deps}, {"shadowed", e.shadowed}};
}

// nullopt for an entry of another shape: the manifest is damaged.
std::optional<ManifestEntry> entry_from(const json& j) {
  const auto result = json_field<std::string>(j, "result");
  const auto deps = json_field<json>(j, "deps");
  const auto shadowed = json_field<json>(j, "shadowed");
  if (!result || result->size() != 64 || !deps || !deps->is_array() || !shadowed || !shadowed->is_array()) {
    return std::nullopt;
  }
  ManifestEntry e;
  e.result = *result;
  for (const auto& d : *deps) {
    if (!d.is_array() || d.size() != 2 || !d[0].is_string() || !d[1].is_string()) return std::nullopt;
    e.deps.emplace_back(d[0].get<std::string>(), d[1].get<std::string>());
  }
  for (const auto& s : *shadowed) {
    if (!s.is_string()) return std::nullopt;
    e.shadowed.push_back(s.get<std::string>());
  }
  return e;
}

}  // namespace

Expected<void> write_whole(const fs::path& path, const std::string& content, const fs::path& tmp_dir) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  return write_whole_file(path, content, tmp_dir);
}

Store::Store(fs::path dir) : dir_(std::move(dir)) {}

Expected<void> Store::prepare() const {
  for (const char* sub : {"compilers", "manifests", "results", "tmp"}) {
    std::error_code ec;
    fs::create_directories(dir_ / sub, ec);
    if (ec) return fail("cannot make " + (dir_ / sub).string() + ": " + ec.message());
  }
  const fs::path tag = dir_ / "CACHEDIR.TAG";
  std::error_code ec;
  if (fs::exists(tag, ec)) return {};
  return write_whole_file(tag,
                          "Signature: 8a477f597d28d172789f06886806bc55\n"
                          "# fabuild's compiler object cache (docs/performance.md); safe to delete.\n",
                          dir_ / "tmp");
}

fs::path Store::manifest_path(const std::string& key) const { return sharded(dir_ / "manifests", key); }
fs::path Store::result_path(const std::string& key) const { return sharded(dir_ / "results", key); }

fs::path Store::temp_path(const std::string& stem) const {
  static std::atomic<unsigned> counter{0};
  return dir_ / "tmp" / (stem + "." + std::to_string(current_pid()) + "." + std::to_string(counter++));
}

std::optional<std::vector<ManifestEntry>> parse_manifest(std::string_view text) {
  const std::optional<json> doc = parse_json(text);
  const auto version = doc ? json_field<int>(*doc, "version") : std::nullopt;
  if (!version) return std::nullopt;
  if (*version != kManifestVersion) return std::vector<ManifestEntry>{};
  const auto listed = json_field<json>(*doc, "entries");
  if (!listed || !listed->is_array()) return std::nullopt;
  std::vector<ManifestEntry> entries;
  for (const auto& e : *listed) {
    auto entry = entry_from(e);
    if (!entry) return std::nullopt;
    entries.push_back(std::move(*entry));
  }
  return entries;
}

StoredManifest Store::manifest(const std::string& key) const {
  const auto text = read_whole(manifest_path(key));
  if (!text) return {};
  auto entries = parse_manifest(*text);
  if (!entries) return StoredManifest{{}, true};
  return StoredManifest{std::move(*entries), false};
}

Expected<void> Store::add_to_manifest(const std::string& key, const ManifestEntry& entry) const {
  const fs::path path = manifest_path(key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const Expected<DirectoryLock> lock = DirectoryLock::acquire(path.parent_path());
  if (!lock) return tl::make_unexpected(lock.error());
  std::vector<ManifestEntry> entries = manifest(key).entries;
  std::erase_if(entries, [&](const ManifestEntry& e) { return e.result == entry.result; });
  entries.insert(entries.begin(), entry);
  if (entries.size() > kMaxManifestEntries) entries.resize(kMaxManifestEntries);
  return write_manifest(path, entries);
}

Expected<void> Store::write_manifest(const fs::path& path, const std::vector<ManifestEntry>& entries) const {
  json list = json::array();
  for (const auto& e : entries) list.push_back(entry_json(e));
  return write_whole(path, json{{"version", kManifestVersion}, {"entries", list}}.dump(), dir_ / "tmp");
}

Expected<std::size_t> Store::merge_manifest(const std::string& key, const std::vector<ManifestEntry>& more) const {
  const fs::path path = manifest_path(key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const Expected<DirectoryLock> lock = DirectoryLock::acquire(path.parent_path());
  if (!lock) return tl::make_unexpected(lock.error());
  std::vector<ManifestEntry> entries = manifest(key).entries;
  std::size_t added = 0;
  for (const ManifestEntry& e : more) {
    if (entries.size() >= kMaxManifestEntries) break;
    const bool known =
        std::any_of(entries.begin(), entries.end(), [&](const ManifestEntry& x) { return x.result == e.result; });
    if (known) continue;
    entries.push_back(e);
    ++added;
  }
  if (added > 0) {
    if (const Expected<void> written = write_manifest(path, entries); !written) {
      return tl::make_unexpected(written.error());
    }
  }
  return added;
}

std::optional<Result> parse_result(std::string_view text) {
  if (!text.starts_with(kResultMagic)) return std::nullopt;
  const auto header_end = text.find('\n', kResultMagic.size());
  if (header_end == std::string::npos) return std::nullopt;
  std::istringstream header(std::string(text.substr(kResultMagic.size(), header_end - kResultMagic.size())));
  std::uint64_t sizes[3] = {};
  std::string digest;
  if (!(header >> sizes[0] >> sizes[1] >> sizes[2] >> digest)) return std::nullopt;
  const std::string_view body = text.substr(header_end + 1);
  if (body.size() != sizes[0] + sizes[1] + sizes[2] || hex(sha256_of(body)) != digest) return std::nullopt;
  Result r;
  r.object = std::string(body.substr(0, sizes[0]));
  r.out = std::string(body.substr(sizes[0], sizes[1]));
  r.err = std::string(body.substr(sizes[0] + sizes[1]));
  return r;
}

StoredResult Store::result(const std::string& key) const {
  const fs::path path = result_path(key);
  const auto text = read_whole(path);
  if (!text) return {};
  auto r = parse_result(*text);
  if (!r) {
    std::error_code ec;
    fs::remove(path, ec);
    return StoredResult{std::nullopt, true};
  }
  return StoredResult{std::move(r), false};
}

Expected<bool> Store::adopt_result(const std::string& key, const std::string& content) const {
  if (!parse_result(content)) return false;
  if (const Expected<void> written = write_whole(result_path(key), content, dir_ / "tmp"); !written) {
    return tl::make_unexpected(written.error());
  }
  return true;
}

Expected<std::uint64_t> Store::put_result(const std::string& key, const Result& result) const {
  const std::string body = result.object + result.out + result.err;
  std::string content(kResultMagic);
  content += std::to_string(result.object.size()) + " " + std::to_string(result.out.size()) + " " +
             std::to_string(result.err.size()) + " " + hex(sha256_of(body)) + "\n";
  content += body;
  if (const Expected<void> written = write_whole(result_path(key), content, dir_ / "tmp"); !written) {
    return tl::make_unexpected(written.error());
  }
  return content.size();
}

void Store::touch(const std::string& manifest_key, const std::string& result_key) const {
  // Failing to touch only makes trimming less accurate.
  const auto now = fs::file_time_type::clock::now();
  set_last_write_time(manifest_path(manifest_key), now);
  set_last_write_time(result_path(result_key), now);
}

namespace {

struct CachedFile {
  fs::path path;
  std::uint64_t size;
  fs::file_time_type used;
};

std::vector<CachedFile> cached_files(const fs::path& dir) {
  std::vector<CachedFile> files;
  for (const char* sub : {"manifests", "results"}) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir / sub, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code e;
      if (!it->is_regular_file(e)) continue;
      const auto size = it->file_size(e);
      const auto used = it->last_write_time(e);
      if (!e) files.push_back(CachedFile{it->path(), size, used});
    }
  }
  return files;
}

}  // namespace

std::uint64_t cache_size(const fs::path& dir) {
  std::uint64_t total = 0;
  for (const auto& f : cached_files(dir)) total += f.size;
  return total;
}

TrimReport trim(const fs::path& dir, std::uint64_t max_bytes) {
  TrimReport report;
  std::vector<CachedFile> files = cached_files(dir);
  for (const auto& f : files) report.bytes_before += f.size;
  report.bytes_after = report.bytes_before;
  if (report.bytes_before > max_bytes) {
    std::sort(files.begin(), files.end(), [](const CachedFile& a, const CachedFile& b) { return a.used < b.used; });
    const std::uint64_t goal = max_bytes / 10 * 9;
    for (const auto& f : files) {
      if (report.bytes_after <= goal) break;
      std::error_code ec;
      if (fs::remove(f.path, ec)) {
        report.bytes_after -= f.size;
        ++report.files_removed;
      }
    }
  }
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  for (fs::directory_iterator it(dir / "tmp", ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e;
    if (it->last_write_time(e) < hour_ago && !e) fs::remove(it->path(), e);
  }
  return report;
}

}  // namespace fabuild::objcache
