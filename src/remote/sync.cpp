#include "remote/sync.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "objcache/probation.h"
#include "util/hash.h"
#include "util/json_read.h"
#include "util/read_whole.h"

namespace fabuild::remote {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Index = std::map<std::string, std::string>;  // local path -> sha256 of its content

constexpr int kIndexVersion = 1;

bool is_hex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// "manifests/ab/<62 hex>" -> ("manifests", "ab<62 hex>"); nullopt for anything else, so that a
// hostile index cannot name a path outside the cache.
std::optional<std::pair<std::string, std::string>> split_path(const std::string& path) {
  static const std::regex form("(manifests|results)/([0-9a-f]{2})/([0-9a-f]{62})");
  std::smatch m;
  if (!std::regex_match(path, m, form)) return std::nullopt;
  return std::make_pair(m[1].str(), m[2].str() + m[3].str());
}

std::string blob_key(const std::string& sha) { return "cas/" + sha; }

// Why a row index is not to be used under `trust`; "" when it is (or nothing is verified).
std::string untrusted(const nlohmann::json& doc, const std::string& row_key, const std::string& writer,
                      const IndexTrust* trust) {
  if (trust == nullptr || !trust->verifying()) return "";
  const auto sig = doc.find("signature");
  if (sig == doc.end() || !sig->is_object() || !sig->contains("key") || !sig->contains("ed25519") ||
      !(*sig)["key"].is_string() || !(*sig)["ed25519"].is_string()) {
    return "it is not signed";
  }
  const std::string id = (*sig)["key"].get<std::string>();
  const PublicKey* key = trust->find(id);
  if (key == nullptr) return fmt::format("it is signed by key {}, which is not one this run accepts", id);
  if (!verify(*key, index_message(row_key, writer, doc.at("objects").dump()), (*sig)["ed25519"].get<std::string>())) {
    return fmt::format("its signature by key {} does not verify for this row and writer", id);
  }
  return "";
}

// One writer's index of the row, or an empty one, with a note when it is garbage or, under
// `trust`, not signed by an accepted key; nullopt, with a note, when the remote could not say.
std::optional<Index> read_index(Store& remote, const std::string& row_key, const std::string& writer, SyncTally& t,
                                const IndexTrust* trust) {
  const std::string key = index_key(row_key, writer);
  const auto got = remote.get(key);
  if (!got) {
    t.notes.push_back(got.error().what);
    return std::nullopt;
  }
  if (!*got) return Index{};
  const auto not_one = [&] {
    t.notes.push_back(fmt::format("the index {}/{} is not one (ignored)", remote.where(), key));
    return Index{};
  };
  const std::optional<nlohmann::json> doc = parse_json(**got);
  const auto version = doc ? json_field<int>(*doc, "version") : std::nullopt;
  if (!version) return not_one();
  if (*version != kIndexVersion) return Index{};
  const auto objects = json_field<nlohmann::json>(*doc, "objects");
  if (!objects || !objects->is_object()) return not_one();
  if (const std::string why = untrusted(*doc, row_key, writer, trust); !why.empty()) {
    ++t.indexes_refused;
    t.notes.push_back(fmt::format("refused the row index {}/{} (writer {}): {}; its objects are compiled here",
                                  remote.where(), key, writer, why));
    return Index{};
  }
  Index index;
  for (const auto& [path, sha] : objects->items()) {
    if (!sha.is_string()) return not_one();
    const std::string s = sha.get<std::string>();
    if (split_path(path) && is_hex64(s)) index[path] = s;
  }
  if (!index.empty()) {
    const auto sig = json_field<nlohmann::json>(*doc, "signature");
    t.indexes_used[writer] = sig ? json_field_or<std::string>(*sig, "key", "") : std::string();
  }
  t.index_found = true;
  return index;
}

std::string relative(const objcache::Store& local, const fs::path& path) {
  return path.lexically_relative(local.dir()).generic_string();
}

}  // namespace

std::string index_key(const std::string& row_key, const std::string& writer) {
  return "ac/" + hex(sha256_of(row_key + "/" + writer));
}

SyncTally fetch_row(Store& remote, const objcache::Store& local, const std::string& row_key,
                    const std::vector<std::string>& writers, std::chrono::milliseconds budget,
                    const IndexTrust* trust) {
  const auto deadline = Clock::now() + budget;
  SyncTally t;
  // Every writer's index: a kernel's result is in each (any copy serves), a manifest may differ
  // between them (each is merged).
  // A writer whose index could not be read costs only that writer's objects: the next ones are
  // still asked, unless two in a row did not answer (the remote is down: asking for the rest
  // would cost as much again).
  std::set<std::pair<std::string, std::string>> listed;
  int unanswered = 0;
  for (const std::string& writer : writers) {
    const auto index = read_index(remote, row_key, writer, t, trust);
    if (!index) {
      if (++unanswered == 2) break;
      continue;
    }
    unanswered = 0;
    listed.insert(index->begin(), index->end());
  }
  // Results first: a manifest entry is only useful once its result is here.
  std::vector<std::pair<std::string, std::string>> order(listed.begin(), listed.end());
  std::stable_partition(order.begin(), order.end(), [](const auto& e) { return e.first.starts_with("results/"); });
  // A path's copy that could not be used, by path: said as a note unless another writer's copy
  // of the same path served (then no compile was lost).
  std::map<std::string, std::string> unused;
  std::set<std::string> served;  // paths taken from the remote
  for (const auto& [path, sha] : order) {
    if (Clock::now() > deadline) {
      t.notes.push_back(fmt::format("stopped fetching after {} s: {} of {} objects not tried", budget.count() / 1000,
                                    order.size() - t.objects - t.already - t.refused, order.size()));
      break;
    }
    const auto [kind, key] = *split_path(path);
    const fs::path target = local.dir() / path;
    // A result is the same whoever compiled it: present is enough. A manifest is merged unless
    // it is the very file listed.
    std::error_code ec;
    bool here = false;
    if (kind == "results") {
      here = fs::exists(target, ec);
    } else if (const auto present = read_whole(target)) {
      here = hex(sha256_of(*present)) == sha;
    }
    if (here) {
      ++t.already;
      continue;
    }
    const auto blob = remote.get(blob_key(sha));
    if (!blob || !*blob) {
      ++t.refused;
      unused.emplace(path, blob ? fmt::format("{} is listed but not on the remote", path) : blob.error().what);
      continue;
    }
    const std::string& bytes = **blob;
    if (hex(sha256_of(bytes)) != sha) {
      ++t.refused;
      t.damaged.push_back(sha);
      unused.emplace(
          path,
          fmt::format("{}: the remote's copy does not match its SHA-256 (damaged or tampered with; not used)", path));
      continue;
    }
    Expected<bool> taken = false;
    if (kind == "results") {
      taken = local.adopt_result(key, bytes);
    } else if (const auto entries = objcache::parse_manifest(bytes)) {
      const Expected<std::size_t> merged = local.merge_manifest(key, *entries);
      taken = merged ? Expected<bool>(true) : tl::make_unexpected(merged.error());
    }
    if (!taken || !*taken) {
      ++t.refused;
      t.notes.push_back(taken ? fmt::format("{}: not a cache file of this fabuild (not used)", path)
                              : fmt::format("{}: {}", path, taken.error().what));
      continue;
    }
    ++t.objects;
    t.bytes += bytes.size();
    served.insert(path);
  }
  for (const auto& [path, note] : unused) {
    if (!served.contains(path)) t.notes.push_back(note);
  }
  // On probation until a build of the row that used them passes its checks (objcache/probation.h).
  if (const Expected<void> added =
          objcache::Probation(local, row_key).add(std::vector<std::string>(served.begin(), served.end()));
      !added) {
    t.notes.push_back(fmt::format("could not put the objects taken on probation: {}", added.error().what));
  }
  return t;
}

SyncTally push_row(Store& remote, const objcache::Store& local, const std::string& row_key, const std::string& writer,
                   const std::vector<std::pair<std::string, std::string>>& used, std::chrono::milliseconds budget,
                   const std::set<std::string>& damaged, const IndexTrust* trust) {
  const auto deadline = Clock::now() + budget;
  SyncTally t;
  const std::string key = index_key(row_key, writer);
  // An index of its name that this run does not trust is replaced by one it signs.
  auto read = read_index(remote, row_key, writer, t, trust);
  if (!read) return t;  // the remote is not answering: nothing to gain from trying each object
  Index& index = *read;
  bool changed = false;  // the index gained an entry
  // Sends one file unless the remote has it; false once the remote fails (the rest is not tried).
  const auto send = [&](const fs::path& path) {
    const std::string rel = relative(local, path);
    const auto bytes = read_whole(path);
    if (!bytes || !split_path(rel)) return true;  // trimmed meanwhile
    const std::string sha = hex(sha256_of(*bytes));
    const bool repair = damaged.contains(sha);
    if (const auto it = index.find(rel); !repair && it != index.end() && it->second == sha) {
      ++t.already;
      return true;
    }
    const auto there = repair ? Expected<bool>(false) : remote.has(blob_key(sha));
    if (!there) {
      t.notes.push_back(there.error().what);
      return false;
    }
    if (*there) {
      ++t.already;
    } else if (const auto put = remote.put(blob_key(sha), *bytes); !put) {
      t.notes.push_back(put.error().what);
      return false;
    } else {
      ++t.objects;
      t.repaired += repair ? 1 : 0;
      t.bytes += bytes->size();
    }
    index[rel] = sha;
    changed = true;
    return true;
  };
  for (const auto& [manifest, result] : used) {
    if (Clock::now() > deadline) {
      t.notes.push_back(fmt::format("stopped sending after {} s", budget.count() / 1000));
      break;
    }
    // The result before the manifest that names it.
    if (!send(local.result_path(result)) || !send(local.manifest_path(manifest))) break;
  }
  if (changed || t.indexes_refused > 0) {
    nlohmann::json doc{{"version", kIndexVersion}, {"objects", index}};
    if (trust != nullptr && trust->signer) {
      const auto signature = sign(*trust->signer, index_message(row_key, writer, doc["objects"].dump()));
      if (!signature) {
        t.notes.push_back(signature.error().what + ": the index was not sent");
        return t;
      }
      doc["signature"] = {{"key", trust->signer->pub.id}, {"ed25519", *signature}};
    }
    if (const auto put = remote.put(key, doc.dump()); !put) t.notes.push_back(put.error().what);
  }
  return t;
}

}  // namespace fabuild::remote
