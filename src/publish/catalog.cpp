#include "publish/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "matrix/values.h"
#include "publish/catalog_cache.h"
#include "util/atomic_file.h"
#include "util/dir_lock.h"
#include "util/error.h"
#include "util/expected.h"
#include "util/hash.h"
#include "util/read_whole.h"
#include "util/text.h"
#include "wheel/build_record.h"
#include "wheel/inspect.h"
#include "wheel/manifest.h"
#include "wheel/wheelhouse.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Directories the walk does not enter: staging and other hidden ones, logs, and the indexes
// this layer writes (simple/ at the top, <accelerator>/ holding variant indexes).
bool skipped_dir(const fs::path& rel) {
  const std::string name = rel.filename().string();
  if (name.empty() || name.front() == '.') return true;
  const bool top = !rel.has_parent_path();
  return top && (name == "logs" || name == "simple" || is_accelerator(name));
}

// Reads the wheel in full: its digest, and its METADATA written beside it; or why it cannot
// be published.
Expected<void> read_wheel(const fs::path& file, CatalogWheel& w) {
  Expected<WheelContents> read = inspect_wheel(file);
  if (!read) return fail(read.error().what);
  const WheelContents& contents = *read;
  if (!contents.metadata) return fail(fmt::format("{} has no METADATA", contents.dist_info));
  const auto name = contents.metadata->first("Name");
  const auto version = contents.metadata->first("Version");
  if (!name || !version) return fail("its METADATA lacks Name or Version");
  if (normalize_project_name(*name) != normalize_project_name(w.name.distribution)) {
    return fail(
        fmt::format("METADATA names the project \"{}\" but the file name says \"{}\"", *name, w.name.distribution));
  }
  // A label in the file name only is how FlashAttention publishes (its setup.py renames the
  // download to the plain version); any other difference is a renamed or mislabelled wheel.
  w.label_in_file_only = !w.name.local_label().empty() && same_version(*version, w.name.public_version());
  if (!same_version(*version, w.name.version) && !w.label_in_file_only) {
    return fail(fmt::format("METADATA says version {} but the file name says {}", *version, w.name.version));
  }
  w.project = normalize_project_name(*name);
  w.requires_python = contents.metadata->first("Requires-Python").value_or("");
  w.metadata_sha256 = hex(sha256_of(contents.metadata_text));
  write_file_atomically(file.string() + kMetadataSuffix, contents.metadata_text);
  const Expected<Sha256> sum = sha256_of_file(file);
  if (!sum) return tl::make_unexpected(sum.error());
  w.sha256 = hex(*sum);
  return {};
}

// A SHA256SUMS's lines; one that cannot be read, or a directory in its place, stops the index
// (UserError, exit 1): it can be neither trusted nor replaced, and removing it is the person's.
std::map<std::string, std::string> sums_or_throw(const fs::path& file) {
  Expected<std::map<std::string, std::string>> sums = read_sha256sums(file);
  if (!sums) throw user_error_of(sums.error());
  return std::move(*sums);
}

// What fabuild recorded of each wheel it filed: the digest SHA256SUMS beside it lists, and the
// manifest's. A wheel whose bytes are no longer those was replaced after filing, behind
// fabuild's back: publishing it would give pip a hash that SHA256SUMS contradicts.
class Recorded {
 public:
  Recorded(const fs::path& wheelhouse, const std::map<std::string, FiledWheel>& manifest) : wheelhouse_(wheelhouse) {
    for (const auto& [cell, filed] : manifest) {
      if (filed.library) continue;
      manifest_[filed.wheel] = filed.sha256;
      if (!filed.torch_proofs.empty()) proofs_[filed.wheel] = &filed;
      if (std::string text = build_record_text(cell, filed); !text.empty()) records_[filed.wheel] = std::move(text);
    }
  }

  // The build record the manifest makes for the wheel at `path`, or nullptr.
  [[nodiscard]] const std::string* record(const std::string& path) const {
    const auto it = records_.find(path);
    return it == records_.end() ? nullptr : &it->second;
  }

  // The variants a wheel serves beside its own directory's: each torch series it is proven
  // under, with its own CUDA tag and the tested torch's.
  std::vector<std::string> proven_variants(const CatalogWheel& w) const {
    const auto it = proofs_.find(w.path);
    if (it == proofs_.end() || w.variant.empty()) return {};
    const std::vector<std::string> parts = split(w.variant, '/');  // cu130/torch2.10andhigher[/profile]
    const std::string profile = parts.size() == 3 ? "/" + parts[2] : "";
    std::set<std::string> out;
    const std::vector<std::string> proven = proven_series(*it->second);
    for (const auto& proof : it->second->torch_proofs) {
      if (std::find(proven.begin(), proven.end(), proof.series) == proven.end()) continue;
      out.insert(fmt::format("{}/torch{}{}", parts[0], proof.series, profile));
      if (const auto cuda = parse_cuda_version(proof.cuda); cuda && cu_tag(*cuda) != parts[0]) {
        out.insert(fmt::format("{}/torch{}{}", cu_tag(*cuda), proof.series, profile));
      }
    }
    out.erase(w.variant);
    return {out.begin(), out.end()};
  }

  // Whether the wheel, with its digest, is what was filed; if not, why it must not be published.
  Expected<void> matches(const CatalogWheel& w) {
    const std::optional<Sums>& sums = sums_in(w.dir());
    const auto filed = manifest_.find(w.path);
    const bool as_filed = filed != manifest_.end() && filed->second == w.sha256;
    if (!sums && as_filed) {
      // Filing writes it beside every wheel: it was removed since, and is written again.
      repairs.emplace(w.dir(), fmt::format("{}/{}: it was missing; {} vouches for {}: written", w.dir(),
                                           kSha256SumsName, kManifestName, w.file_name()));
    } else if (sums) {
      const auto listed = sums->find(w.file_name());
      const bool sums_right = listed != sums->end() && listed->second == w.sha256;
      if (!sums_right && as_filed) {
        // The wheel is what manifest.json filed: the sums file is what changed. It is written
        // again from the wheels the manifest vouches for, and the wheel stays published.
        repairs.emplace(w.dir(), fmt::format("{}/{}: its line for {} {}; the wheel and {} agree on {}: rewritten",
                                             w.dir(), kSha256SumsName, w.file_name(),
                                             listed == sums->end() ? "was missing" : "said " + listed->second,
                                             kManifestName, w.sha256));
      } else if (listed == sums->end()) {
        return fail(fmt::format("{} beside it does not list it (sha256 {}): it was put there after filing",
                                kSha256SumsName, w.sha256));
      } else if (listed->second != w.sha256) {
        return fail(fmt::format("its sha256 is {}, but {} beside it lists {}: the file changed after it was filed",
                                w.sha256, kSha256SumsName, listed->second));
      }
    }
    if (filed != manifest_.end() && filed->second != w.sha256) {
      return fail(fmt::format("its sha256 is {}, but {} records {}: the file changed after it was filed", w.sha256,
                              kManifestName, filed->second));
    }
    return {};
  }

 private:
  fs::path wheelhouse_;
  std::map<std::string, std::string> manifest_;      // path -> sha256
  std::map<std::string, const FiledWheel*> proofs_;  // by path: its torch proofs
  std::map<std::string, std::string> records_;       // by path: its build record
  using Sums = std::map<std::string, std::string>;   // wheel name -> sha256
  std::map<std::string, std::optional<Sums>> sums_;  // by directory; nullopt: it has none

  // What the SHA256SUMS of `dir` lists, read once (sums_or_throw).
  const std::optional<Sums>& sums_in(const std::string& dir) {
    if (const auto it = sums_.find(dir); it != sums_.end()) return it->second;
    const fs::path file = wheelhouse_ / dir / kSha256SumsName;
    std::error_code ec;
    std::optional<Sums> sums;
    if (fs::exists(fs::symlink_status(file, ec))) sums = sums_or_throw(file);
    return sums_.emplace(dir, std::move(sums)).first->second;
  }

 public:
  std::map<std::string, std::string> repairs;  // directory -> what was wrong with its SHA256SUMS

  // The digests manifest.json files for the wheels of `dir`, by file name.
  [[nodiscard]] std::map<std::string, std::string> filed_in(const std::string& dir) const {
    std::map<std::string, std::string> out;
    for (const auto& [path, sha] : manifest_) {
      const auto slash = path.rfind('/');
      if (slash != std::string::npos && path.substr(0, slash) == dir) out[path.substr(slash + 1)] = sha;
    }
    return out;
  }
};

// The wheelhouse's regular files, not hidden, walked as the catalog walks it: no directory it
// skips (logs/, staging), no symbolic link to a directory followed.
std::vector<fs::directory_entry> wheelhouse_files(const fs::path& wheelhouse) {
  std::vector<fs::directory_entry> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(wheelhouse, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(wheelhouse);
    if (it->is_directory(ec)) {
      if (it->is_symlink(ec) || skipped_dir(rel)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && rel.filename().string().front() != '.') files.push_back(*it);
  }
  return files;
}

}  // namespace

Catalog catalog_by_name(const fs::path& wheelhouse, const std::map<std::string, FiledWheel>& manifest) {
  const Recorded recorded(wheelhouse, manifest);
  Catalog catalog;
  for (const fs::directory_entry& file : wheelhouse_files(wheelhouse)) {
    const fs::path rel = file.path().lexically_relative(wheelhouse);
    const std::string name = rel.filename().string();
    if (!name.ends_with(".whl")) continue;
    Expected<WheelName> parsed = parse_wheel_name(name);
    if (!parsed) continue;  // left out by the catalog too
    CatalogWheel w;
    w.path = rel.generic_string();
    w.name = std::move(*parsed);
    w.project = normalize_project_name(w.name.distribution);
    w.variant = variant_of_dir(w.dir());
    w.proven_variants = recorded.proven_variants(w);
    catalog.wheels.push_back(std::move(w));
  }
  return catalog;
}

Catalog catalog_wheelhouse(const fs::path& wheelhouse) {
  // A manifest that cannot be read is the build's to report; SHA256SUMS still speaks.
  const Expected<std::map<std::string, FiledWheel>> manifest = read_manifest(wheelhouse);
  return catalog_wheelhouse(wheelhouse, manifest.value_or(std::map<std::string, FiledWheel>()));
}

Catalog catalog_wheelhouse(const fs::path& wheelhouse, const std::map<std::string, FiledWheel>& manifest) {
  std::error_code ec;
  if (!fs::is_directory(wheelhouse, ec)) {
    throw config_error(
        Location{wheelhouse.string()},
        fs::exists(wheelhouse, ec) ? "the wheelhouse is not a directory" : "the wheelhouse does not exist",
        "give the directory fabuild built into (its -o or the matrix's wheelhouse:), e.g. fabuild index wheelhouse");
  }
  const fs::path cache_file = wheelhouse / kCatalogCacheName;
  const std::map<std::string, CatalogCacheEntry> cache = load_catalog_cache(cache_file);
  std::map<std::string, CatalogCacheEntry> fresh;
  Catalog catalog;
  Recorded recorded(wheelhouse, manifest);
  std::set<std::string> wheel_files;
  std::vector<fs::path> metadata_files;
  std::vector<fs::path> record_files;
  std::map<std::string, std::map<std::string, std::string>> records_written;  // dir -> record name -> sha256

  for (const fs::directory_entry& file : wheelhouse_files(wheelhouse)) {
    const fs::path rel = file.path().lexically_relative(wheelhouse);
    const std::string name = rel.filename().string();
    if (name.ends_with(std::string(".whl") + kMetadataSuffix)) {
      metadata_files.push_back(file.path());
      continue;
    }
    if (is_build_record_name(name)) {
      record_files.push_back(file.path());
      continue;
    }
    if (name.ends_with(".tar.gz") && is_library_dir(rel.parent_path().generic_string())) {
      // Its digest as filing wrote it beside it; read when that does not list it.
      CatalogLibrary lib{rel.generic_string(), "", file.file_size(ec)};
      const auto sums = sums_or_throw(file.path().parent_path() / kSha256SumsName);
      const auto listed = sums.find(name);
      if (listed != sums.end()) {
        lib.sha256 = listed->second;
      } else if (const Expected<Sha256> sum = sha256_of_file(file.path())) {
        lib.sha256 = hex(*sum);
      } else {
        throw std::runtime_error(sum.error().what);
      }
      catalog.libraries.push_back(std::move(lib));
      continue;
    }
    if (!name.ends_with(".whl")) continue;
    wheel_files.insert(file.path().string());
    CatalogWheel w;
    w.path = rel.generic_string();
    Expected<WheelName> parsed = parse_wheel_name(name);
    if (!parsed) {
      catalog.left_out.push_back(w.path + ": " + parsed.error().what);
      continue;
    }
    w.name = std::move(*parsed);
    w.variant = variant_of_dir(w.dir());
    CatalogCacheEntry entry;
    entry.size = file.file_size(ec);
    entry.mtime = file_mtime_ns(file.path());
    const fs::path metadata = file.path().string() + kMetadataSuffix;
    const auto hit = cache.find(w.path);
    if (hit != cache.end() && hit->second.size == entry.size && hit->second.mtime == entry.mtime &&
        fs::file_size(metadata, ec) == hit->second.metadata_size && !ec) {
      const CatalogWheel& known = hit->second.wheel;
      w.sha256 = known.sha256;
      w.metadata_sha256 = known.metadata_sha256;
      w.requires_python = known.requires_python;
      w.label_in_file_only = known.label_in_file_only;
      w.project = known.project;
    } else if (const Expected<void> read = read_wheel(file.path(), w); !read) {
      catalog.left_out.push_back(w.path + ": " + read.error().what);
      continue;
    }
    if (const Expected<void> filed = recorded.matches(w); !filed) {
      catalog.left_out.push_back(w.path + ": " + filed.error().what);
      continue;
    }
    w.size = entry.size;
    w.proven_variants = recorded.proven_variants(w);
    if (const std::string* record = recorded.record(w.path)) {
      // Made from the manifest: written when missing or not what the entry says.
      const fs::path beside = file.path().string() + kBuildRecordSuffix;
      if (read_whole(beside) != *record) write_file_atomically(beside, *record);
      records_written[w.dir()][w.file_name() + kBuildRecordSuffix] = hex(sha256_of(*record));
      w.build_record = true;
    }
    entry.metadata_size = fs::file_size(metadata, ec);
    entry.wheel = w;
    fresh[w.path] = entry;
    catalog.wheels.push_back(std::move(w));
  }
  if (ec) {
    throw UserError(kExitCellFailed, Location{wheelhouse.string()}, "cannot read the wheelhouse: " + ec.message(),
                    "check its permissions");
  }
  // The METADATA of a wheel that is gone (or no longer published) must not linger beside it.
  for (const auto& m : metadata_files) {
    const std::string wheel = m.string().substr(0, m.string().size() - std::string_view(kMetadataSuffix).size());
    const bool published = fresh.count(fs::path(wheel).lexically_relative(wheelhouse).generic_string()) != 0;
    if (wheel_files.count(wheel) == 0 || !published) fs::remove(m, ec);
  }
  // A build record whose wheel is gone, or has none in the manifest, goes with it.
  for (const auto& r : record_files) {
    const std::string wheel = r.string().substr(0, r.string().size() - std::string_view(kBuildRecordSuffix).size());
    const std::string rel = fs::path(wheel).lexically_relative(wheelhouse).generic_string();
    if (wheel_files.count(wheel) == 0 || recorded.record(rel) == nullptr || fresh.count(rel) == 0) {
      fs::remove(r, ec);
      records_written[fs::path(rel).parent_path().generic_string()];  // its line goes too
    }
  }
  for (const auto& [dir, what] : recorded.repairs) {
    // Each wheel's line as manifest.json files it; one it does not vouch for keeps its line.
    const DirLock lock(wheelhouse / dir);
    std::map<std::string, std::string> known = recorded.filed_in(dir);
    if (const auto r = records_written.find(dir); r != records_written.end())
      known.insert(r->second.begin(), r->second.end());
    if (auto sums = update_sha256sums_locked(wheelhouse / dir, known); !sums) throw user_error_of(sums.error());
    catalog.repaired.push_back(what);
    records_written.erase(dir);
  }
  for (const auto& [dir, records] : records_written) {  // their lines in SHA256SUMS, when not there yet
    const DirLock lock(wheelhouse / dir);
    if (auto sums = update_sha256sums_locked(wheelhouse / dir, records); !sums) throw user_error_of(sums.error());
  }
  std::sort(catalog.wheels.begin(), catalog.wheels.end(),
            [](const CatalogWheel& a, const CatalogWheel& b) { return a.path < b.path; });
  std::sort(catalog.libraries.begin(), catalog.libraries.end(),
            [](const CatalogLibrary& a, const CatalogLibrary& b) { return a.path < b.path; });
  save_catalog_cache(cache_file, fresh);
  return catalog;
}

}  // namespace fabuild
