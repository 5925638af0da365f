#include "wheel/manifest.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "util/dir_lock.h"
#include "util/error.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/json_read.h"
#include "util/read_whole.h"
#include "util/version.h"
#include "wheel/inspect.h"
#include "wheel/wheelhouse.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kKeepHint =
    "fabuild leaves it as it is; repair it or move it aside (the wheels are not affected), then run again";

// What is wrong with the manifest at `path`, where in it: "manifest.json:2:7: the wheelhouse
// manifest is not valid: ...", as the error that stops a build prints it.
tl::unexpected<Failure> corrupt(const fs::path& path, const std::string& what, int line = 0, int column = 0) {
  const std::string where = Location{path.string(), line, column}.str();
  return fail(printable(where + ": the wheelhouse manifest is not valid: " + what), std::string(kKeepHint));
}

// A manifest that cannot be used where a wheel is filed: the run's error (exit 1).
[[noreturn]] void throw_failure(const Failure& f) { throw user_error_of(f); }

// The manifest replaced whole, on the disk before it returns.
Expected<void> write_manifest(const fs::path& path, const json& doc) {
  if (auto written = write_whole_file(path, doc.dump(2) + "\n", {}, true); !written) {
    return wheelhouse_write_failure(written.error());
  }
  return {};
}

template <class T>
T value_or_throw(Expected<T> got) {
  if (!got) throw_failure(got.error());
  return std::move(*got);
}

// 1-based line and column of a byte offset, for an editor to jump to.
std::pair<int, int> position_of(const std::string& text, std::size_t byte) {
  int line = 1;
  int column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// The manifest as JSON, {"cells": {}} when there is none yet; validated as far as the
// shape fabuild relies on.
std::atomic<std::size_t> parses{0};

Expected<json> load(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return json{{"cells", json::object()}};
  ++parses;
  const std::optional<std::string> read = read_whole(path);
  if (!read) return corrupt(path, "it cannot be read");
  const std::string& text = *read;
  std::optional<json> doc = parse_json(text);
  if (!doc) {
    const JsonSyntaxError error = json_syntax_error(text).value_or(JsonSyntaxError{"unknown syntax error", 0});
    const auto [line, column] = position_of(text, error.byte);
    return corrupt(path, "it is not JSON (" + error.message + ")", line, column);
  }
  if (!doc->is_object()) return corrupt(path, "the top level is not an object");
  if (!doc->contains("cells")) (*doc)["cells"] = json::object();
  if (!(*doc)["cells"].is_object()) return corrupt(path, "\"cells\" is not an object");
  return std::move(*doc);
}

Expected<FiledWheel> entry_from(const fs::path& path, const std::string& cell_id, const json& j) {
  const auto field_error = [&](const std::string& key, const char* kind) {
    return corrupt(path, fmt::format("cells.\"{}\".{} is missing or not {}", cell_id, key, kind));
  };
  if (!j.is_object()) return corrupt(path, fmt::format("cells.\"{}\" is not an object", cell_id));
  FiledWheel entry;
  entry.library = j.contains("library") && !j.contains("wheel");
  const char* file = entry.library ? "library" : "wheel";
  if (!j.contains(file) || !j[file].is_string()) return field_error(file, "a string");
  if (!j.contains("sha256") || !j["sha256"].is_string()) return field_error("sha256", "a string");
  if (!j.contains("size") || !j["size"].is_number_unsigned()) return field_error("size", "a whole number");
  entry.wheel = j[file].get<std::string>();
  entry.sha256 = j["sha256"].get<std::string>();
  entry.size = j["size"].get<std::uint64_t>();
  if (j.contains("build_seconds")) {
    if (!j["build_seconds"].is_number()) return field_error("build_seconds", "a number");
    entry.build_seconds = j["build_seconds"].get<double>();
  }
  if (j.contains("versions")) {
    if (!j["versions"].is_object()) return field_error("versions", "an object");
    for (const auto& [key, value] : j["versions"].items()) {
      if (!value.is_string()) return field_error("versions." + key, "a string");
      entry.versions[key] = value.get<std::string>();
    }
  }
  if (j.contains("image")) {
    const json& image = j["image"];
    if (!image.is_object() || !image.value("name", json()).is_string() || !image.value("id", json()).is_string()) {
      return field_error("image", "an object with a name and an id");
    }
    entry.image = image["name"].get<std::string>();
    entry.image_id = image["id"].get<std::string>();
    if (image.contains("digest")) {
      if (!image["digest"].is_string()) return field_error("image.digest", "a string");
      entry.image_digest = image["digest"].get<std::string>();
    }
  }
  if (j.contains("object_cache")) {
    if (!j["object_cache"].is_object()) return field_error("object_cache", "an object");
    for (const auto& [key, value] : j["object_cache"].items()) {
      if (!value.is_number_unsigned()) return field_error("object_cache." + key, "a whole number");
      entry.object_cache[key] = value.get<std::uint64_t>();
    }
  }
  for (const auto& [key, field] :
       {std::pair<const char*, std::map<std::string, std::string>*>{"patches", &entry.patches},
        {"exports", &entry.exports},
        {"needs", &entry.needs},
        {"gpu_code", &entry.gpu_code}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_object()) return field_error(key, "an object");
    for (const auto& [name, value] : j[key].items()) {
      if (!value.is_string()) return field_error(std::string(key) + "." + name, "a string");
      (*field)[name] = value.get<std::string>();
    }
  }
  if (j.contains("stable_floor")) {
    if (!j["stable_floor"].is_string()) return field_error("stable_floor", "a string");
    entry.stable_floor = j["stable_floor"].get<std::string>();
  }
  if (j.contains("torch_proofs")) {
    if (!j["torch_proofs"].is_array()) return field_error("torch_proofs", "a list");
    for (const json& p : j["torch_proofs"]) {
      if (!p.is_object() || !p.value("series", json()).is_string() || !p.value("ok", json()).is_boolean())
        return field_error("torch_proofs", "a list of objects with a series and ok");
      FiledWheel::TorchProof proof;
      proof.series = p["series"].get<std::string>();
      proof.ok = p["ok"].get<bool>();
      for (auto [key, field] : {std::pair<const char*, std::string*>{"torch", &proof.torch},
                                {"cuda", &proof.cuda},
                                {"detail", &proof.detail},
                                {"gpu", &proof.gpu}}) {
        if (p.contains(key) && p[key].is_string()) *field = p[key].get<std::string>();
      }
      entry.torch_proofs.push_back(std::move(proof));
    }
  }
  if (j.contains("torch_ops")) {
    if (!j["torch_ops"].is_array()) return field_error("torch_ops", "a list");
    for (const json& op : j["torch_ops"]) {
      if (!op.is_string()) return field_error("torch_ops", "a list of strings");
      entry.torch_ops.push_back(op.get<std::string>());
    }
  }
  if (j.contains("build")) {
    if (!j["build"].is_object()) return field_error("build", "an object");
    entry.build = j["build"].dump();
  }
  if (const Expected<void> safe = safe_member_path(entry.wheel); !safe) {
    return corrupt(path, fmt::format("cells.\"{}\".{} \"{}\" does not stay inside the wheelhouse: {}", cell_id, file,
                                     entry.wheel, safe.error().what));
  }
  return entry;
}

json to_json(const FiledWheel& entry) {
  json j{{entry.library ? "library" : "wheel", entry.wheel},
         {"sha256", entry.sha256},
         {"size", entry.size},
         {"build_seconds", entry.build_seconds},
         {"versions", entry.versions}};
  if (!entry.image.empty()) {
    j["image"] = json{{"name", entry.image}, {"id", entry.image_id}};
    if (!entry.image_digest.empty()) j["image"]["digest"] = entry.image_digest;
  }
  if (!entry.object_cache.empty()) j["object_cache"] = entry.object_cache;
  if (!entry.patches.empty()) j["patches"] = entry.patches;
  if (!entry.exports.empty()) j["exports"] = entry.exports;
  if (!entry.needs.empty()) j["needs"] = entry.needs;
  if (!entry.gpu_code.empty()) j["gpu_code"] = entry.gpu_code;
  if (!entry.stable_floor.empty()) j["stable_floor"] = entry.stable_floor;
  if (!entry.torch_proofs.empty()) {
    json proofs = json::array();
    for (const auto& p : entry.torch_proofs) {
      json one{{"series", p.series}, {"torch", p.torch}, {"cuda", p.cuda}, {"ok", p.ok}, {"detail", p.detail}};
      if (!p.gpu.empty()) one["gpu"] = p.gpu;
      proofs.push_back(std::move(one));
    }
    j["torch_proofs"] = std::move(proofs);
  }
  if (!entry.torch_ops.empty()) j["torch_ops"] = entry.torch_ops;
  if (!entry.build.empty()) {
    if (json build = json::parse(entry.build, nullptr, false); build.is_object()) j["build"] = std::move(build);
  }
  return j;
}

}  // namespace

Expected<void> record_filed(const fs::path& wheelhouse, const std::string& cell_id, const FiledWheel& entry) {
  if (const Expected<void> safe = safe_member_path(entry.wheel); !safe) {
    throw std::invalid_argument(
        fmt::format("record_filed: wheel path \"{}\" for {}: {}", entry.wheel, cell_id, safe.error().what));
  }
  std::error_code ec;
  fs::create_directories(wheelhouse, ec);
  const Expected<DirLock> lock = DirLock::acquire(wheelhouse);
  if (!lock) return tl::make_unexpected(lock.error());
  const fs::path path = wheelhouse / kManifestName;
  Expected<json> doc = load(path);
  if (!doc) return tl::make_unexpected(doc.error());
  (*doc)["cells"][cell_id] = to_json(entry);
  return write_manifest(path, *doc);
}

std::optional<FiledWheel> find_filed(const fs::path& wheelhouse, const std::string& cell_id) {
  const fs::path path = wheelhouse / kManifestName;
  const json doc = value_or_throw(load(path));
  const auto& cells = doc["cells"];
  const auto it = cells.find(cell_id);
  if (it == cells.end()) return std::nullopt;
  return value_or_throw(entry_from(path, cell_id, *it));
}

FiledState check_filed(const fs::path& wheelhouse, const FiledWheel& entry) {
  const fs::path wheel = wheelhouse / entry.wheel;
  std::error_code ec;
  if (!fs::is_regular_file(wheel, ec)) return FiledState::kMissing;
  if (fs::file_size(wheel, ec) != entry.size || ec) return FiledState::kChanged;
  const Expected<Sha256> sum = sha256_of_file(wheel);
  return sum && hex(*sum) == entry.sha256 ? FiledState::kIntact : FiledState::kChanged;
}

std::size_t manifest_parses() { return parses.load(); }

Expected<std::map<std::string, FiledWheel>> read_manifest(const fs::path& wheelhouse) {
  const fs::path path = wheelhouse / kManifestName;
  const Expected<json> doc = load(path);
  if (!doc) return tl::make_unexpected(doc.error());
  std::map<std::string, FiledWheel> entries;
  for (const auto& [cell_id, entry] : (*doc)["cells"].items()) {
    Expected<FiledWheel> filed = entry_from(path, cell_id, entry);
    if (!filed) return tl::make_unexpected(filed.error());
    entries.emplace(cell_id, std::move(*filed));
  }
  return entries;
}

std::map<std::string, FiledWheel> manifest_entries(const fs::path& wheelhouse) {
  return value_or_throw(read_manifest(wheelhouse));
}

Expected<std::size_t> copy_filed(const fs::path& wheelhouse, const std::vector<FiledCopy>& entries) {
  std::map<fs::path, json> sources;
  for (const auto& e : entries) {
    if (sources.count(e.from) > 0) continue;
    Expected<json> source = load(e.from / kManifestName);
    if (!source) return tl::make_unexpected(source.error());
    sources.emplace(e.from, std::move(*source));
  }
  std::error_code ec;
  fs::create_directories(wheelhouse, ec);
  const Expected<DirLock> lock = DirLock::acquire(wheelhouse);
  if (!lock) return tl::make_unexpected(lock.error());
  const fs::path path = wheelhouse / kManifestName;
  Expected<json> doc = load(path);
  if (!doc) return tl::make_unexpected(doc.error());
  std::size_t changed = 0;
  for (const auto& e : entries) {
    const fs::path from = e.from / kManifestName;
    const auto& cells = sources.at(e.from)["cells"];
    if (!cells.contains(e.cell_id))
      return corrupt(from, fmt::format("it has no entry for cell {} any more", e.cell_id));
    json entry = cells[e.cell_id];
    if (e.proofs) {
      FiledWheel with;
      with.torch_proofs = *e.proofs;
      const json proofs = to_json(with).value("torch_proofs", json::array());
      entry["torch_proofs"] = proofs;
    }
    const Expected<FiledWheel> incoming = entry_from(from, e.cell_id, entry);
    if (!incoming) return tl::make_unexpected(incoming.error());
    json& cells_here = (*doc)["cells"];
    if (cells_here.contains(e.cell_id)) {
      const json& cell = cells_here[e.cell_id];
      const Expected<FiledWheel> there = entry_from(path, e.cell_id, cell);
      if (!there) return tl::make_unexpected(there.error());
      const bool differs = there->wheel != incoming->wheel || there->sha256 != incoming->sha256;
      if (differs && (e.stale_sha256.empty() || there->sha256 != e.stale_sha256)) {
        return fail(printable(fmt::format("{}: cell {} is filed here as {} (sha256 {}) and in {} as {} (sha256 {})",
                                          path.string(), e.cell_id, there->wheel, there->sha256, from.string(),
                                          incoming->wheel, incoming->sha256)),
                    "the manifest changed while merging; nothing was written to it; run the merge again");
      }
      if (cell == entry) continue;
    }
    cells_here[e.cell_id] = entry;
    ++changed;
  }
  if (changed > 0) {
    if (auto written = write_manifest(path, *doc); !written) return tl::make_unexpected(written.error());
  }
  return changed;
}

void merge_proofs(std::vector<FiledWheel::TorchProof>& proofs, const std::vector<FiledWheel::TorchProof>& more) {
  for (const auto& p : more) {
    const auto it = std::find_if(proofs.begin(), proofs.end(), [&](const auto& q) { return q.series == p.series; });
    if (it == proofs.end()) {
      proofs.push_back(p);
    } else if (it->ok && !p.ok) {
      *it = p;
    }
  }
  std::sort(proofs.begin(), proofs.end(), [](const auto& a, const auto& b) {
    const auto x = Version::parse(a.series);
    const auto y = Version::parse(b.series);
    return x && y ? *x < *y : a.series < b.series;
  });
}

std::vector<std::string> proven_series(const FiledWheel& entry) {
  std::vector<std::string> series;
  for (const auto& proof : entry.torch_proofs) {
    if (!proof.ok) break;
    series.push_back(proof.series);
  }
  return series;
}

}  // namespace fabuild
