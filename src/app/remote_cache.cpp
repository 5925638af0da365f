#include "app/remote_cache.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "app/object_cache.h"
#include "app/remote_trust.h"
#include "engine/facts.h"
#include "matrix/loader.h"
#include "remote/guard.h"
#include "remote/sync.h"
#include "util/byte_size.h"
#include "util/error.h"
#include "util/hash.h"

namespace fabuild {

namespace {

using nlohmann::json;

enum class Sync { kFetch, kPush };

void log_sync(Files& files, const std::string& log_path, Sync what, const remote::SyncTally& t,
              const std::string& where) {
  std::string log;
  if (what == Sync::kFetch) {
    log = fmt::format("fabuild: remote cache {}: {}; {} objects taken ({}), {} here already, {} refused\n", where,
                      t.index_found     ? "the row is there"
                      : t.notes.empty() ? "nothing for this row yet"
                                        : "the row could not be read (below)",
                      t.objects, format_bytes(t.bytes), t.already, t.refused);
  } else {
    log = fmt::format("fabuild: remote cache {}: {} objects sent ({}), {} there already{}\n", where, t.objects,
                      format_bytes(t.bytes), t.already,
                      t.repaired > 0 ? fmt::format("; {} sent again over a damaged copy", t.repaired) : "");
  }
  // The same words for each writer's index of a dropped remote: once, with how many times.
  for (std::size_t i = 0; i < t.notes.size(); ++i) {
    if (std::find(t.notes.begin(), t.notes.begin() + static_cast<std::ptrdiff_t>(i), t.notes[i]) !=
        t.notes.begin() + static_cast<std::ptrdiff_t>(i))
      continue;
    const auto times = std::count(t.notes.begin(), t.notes.end(), t.notes[i]);
    log += fmt::format("fabuild: remote cache: note: {}{}\n", t.notes[i],
                       times > 1 ? fmt::format(" (x{})", times) : std::string());
  }
  files.append(log_path, log);
}

json as_json(const remote::SyncTally& t) {
  return json{{"found", t.index_found},
              {"objects", t.objects},
              {"bytes", t.bytes},
              {"already", t.already},
              {"refused", t.refused},
              {"repaired", t.repaired},
              {"damaged", t.damaged},
              {"indexes_refused", t.indexes_refused},
              {"indexes_used", t.indexes_used},
              {"notes", t.notes.size()},
              {"dropped", std::any_of(t.notes.begin(), t.notes.end(), remote::is_dropped_note)}};
}

// The SHA-256s the cell's fetch found damaged on the remote (its fact), for the push to repair.
std::set<std::string> damaged_in(const Facts& facts) {
  std::set<std::string> damaged;
  if (const auto text = fact(facts, kFactRemoteFetch)) {
    const json f = json::parse(*text, nullptr, false);
    if (const auto it = f.find("damaged"); f.is_object() && it != f.end() && it->is_array()) {
      for (const auto& sha : *it) {
        if (sha.is_string()) damaged.insert(sha.get<std::string>());
      }
    }
  }
  return damaged;
}

}  // namespace

RemoteCacheSettings remote_cache_settings(const CacheSpec& spec, bool object_cache_on, const Environment& env,
                                          const Files& files) {
  RemoteCacheSettings s;
  s.token_env = spec.remote_token_env.empty() ? kDefaultRemoteTokenEnv : spec.remote_token_env;
  if (!object_cache_on) return s;
  if (const auto url = env.get("FABUILD_CACHE_REMOTE"); url && !url->empty()) {
    if (const auto checked = check_remote_url(*url); !checked) {
      throw config_error(Location{}, "FABUILD_CACHE_REMOTE " + checked.error().what,
                         checked.error().hint + "; or unset FABUILD_CACHE_REMOTE");
    }
    s.url = *url;
    s.from = "FABUILD_CACHE_REMOTE";
  } else if (!spec.remote.empty()) {
    s.url = spec.remote;
    s.from = "cache.remote in " + spec.where.str();
  }
  if (s.url.starts_with("redis://")) {
    if (const auto address = remote::parse_redis_url(s.url); !address) {
      throw config_error(s.from == "FABUILD_CACHE_REMOTE" ? Location{} : spec.where,
                         fmt::format("{}: {}", s.from, address.error().what),
                         address.error().hint.empty() ? "e.g. redis://127.0.0.1:6379/0" : address.error().hint);
    }
  }
  if (s.url.empty()) return s;
  const WriteDecision decision = remote_write_decision(spec, env, files);
  s.write = decision.write;
  s.write_why = decision.why;
  s.trust = index_trust(spec, s.write, env);
  return s;
}

std::string remote_writer(const Cell& cell) { return cell.python.str(); }

std::vector<std::string> remote_writers() { return known_python_tags(); }

std::string share_writer(int index) { return fmt::format("share{}", index); }

namespace {

constexpr const char* kSharesWriter = "shares";  // not a Python tag, nor share<N>
constexpr const char* kCostsWriter = "costs";
constexpr int kMostShares = 256;  // GitHub's jobs per matrix

std::string costs_writer(int share) {
  return share > 0 ? fmt::format("{}-share{}", kCostsWriter, share) : kCostsWriter;
}

}  // namespace

int recorded_shares(remote::Store& store, const std::string& row_key) {
  const auto got = store.get(remote::index_key(row_key, kSharesWriter));
  if (!got || !*got) return 0;
  const json j = json::parse(**got, nullptr, false);
  const int n = j.is_object() ? j.value("shares", 0) : 0;
  return n > 0 && n <= kMostShares ? n : 0;
}

std::vector<std::string> share_writers(remote::Store& store, const std::string& row_key) {
  std::vector<std::string> writers;
  const int n = recorded_shares(store, row_key);
  for (int k = 1; k <= n; ++k) writers.push_back(share_writer(k));
  return writers;
}

Expected<void> mark_shares(remote::Store& store, const std::string& row_key, int count) {
  if (recorded_shares(store, row_key) >= count) return {};
  return store.put(remote::index_key(row_key, kSharesWriter), json{{"version", 1}, {"shares", count}}.dump());
}

std::optional<std::string> fetch_row_costs(remote::Store& store, const std::string& row_key, int share) {
  const auto got = store.get(remote::index_key(row_key, costs_writer(share)));
  if (!got || !*got) return std::nullopt;
  return **got;
}

Expected<void> push_row_costs(remote::Store& store, const std::string& row_key, const std::string& json_text,
                              int share) {
  if (share == 0) {
    if (auto kept = store.put("cas/" + hex(sha256_of(json_text)), json_text); !kept) return kept;
  }
  return store.put(remote::index_key(row_key, costs_writer(share)), json_text);
}

std::optional<std::string> fetch_costs_by_digest(remote::Store& store, const std::string& digest) {
  const auto got = store.get("cas/" + digest);
  if (!got || !*got || hex(sha256_of(**got)) != digest) return std::nullopt;
  return **got;
}

Step remote_fetch_step(std::shared_ptr<remote::Store> store, std::string local_dir, std::string row_key,
                       std::chrono::milliseconds budget, std::shared_ptr<Files> files, std::string only_writer,
                       std::shared_ptr<const remote::IndexTrust> trust) {
  return Step{"cache-fetch", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
                const objcache::Store local(local_dir);
                if (const Expected<void> made = local.prepare(); !made) {
                  files->append(ctx.cell.log_path, "fabuild: remote cache: note: " + made.error().what + "\n");
                  return {};
                }
                // The writers: every Python tag of the row, and each compile share a share job said exists.
                std::vector<std::string> writers = {only_writer};
                if (only_writer.empty()) {
                  writers = remote_writers();
                  for (auto& w : share_writers(*store, row_key)) writers.push_back(std::move(w));
                }
                const remote::SyncTally t = remote::fetch_row(*store, local, row_key, writers, budget, trust.get());
                log_sync(*files, ctx.cell.log_path, Sync::kFetch, t, store->where());
                ctx.facts[kFactRemoteFetch] = as_json(t).dump();
                return {};
              }};
}

Step remote_push_step(std::shared_ptr<remote::Store> store, std::string local_dir, std::string row_key,
                      std::string writer, std::shared_ptr<CellCompiles> compiles, std::chrono::milliseconds budget,
                      std::shared_ptr<Files> files, std::shared_ptr<const remote::IndexTrust> trust) {
  return Step{"cache-push", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
                const objcache::Store local(local_dir);
                const remote::SyncTally t =
                    remote::push_row(*store, local, row_key, writer, compiles->after_build().objects, budget,
                                     damaged_in(ctx.facts), trust.get());
                log_sync(*files, ctx.cell.log_path, Sync::kPush, t, store->where());
                ctx.facts[kFactRemotePush] = as_json(t).dump();
                return {};
              }};
}

Step remote_kept_step(std::shared_ptr<CellCompiles> compiles) {
  return Step{"cache-kept", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
                const CacheTally t = compiles->after_build();
                ctx.facts[kFactRemoteKept] = json{{"objects", t.misses}, {"bytes", t.stored_bytes}}.dump();
                return {};
              }};
}

RemoteCacheReport remote_cache_report(const std::vector<CellOutcome>& outcomes) {
  RemoteCacheReport r;
  const auto read = [](const Facts& facts, const char* name) {
    const auto text = fact(facts, name);
    return text ? json::parse(*text, nullptr, false) : json();
  };
  for (const CellOutcome& o : outcomes) {
    if (const json f = read(o.facts, kFactRemoteFetch); f.is_object()) {
      ++r.fetches;
      r.rows_found += f.value("found", false) ? 1 : 0;
      r.fetched += f.value("objects", std::uint64_t{0});
      r.fetched_bytes += f.value("bytes", std::uint64_t{0});
      r.refused += f.value("refused", std::uint64_t{0});
      r.indexes_refused += f.value("indexes_refused", std::uint64_t{0});
      r.notes += f.value("notes", std::uint64_t{0});
      r.dropped = r.dropped || f.value("dropped", false);
    }
    if (const json f = read(o.facts, kFactRemoteKept); f.is_object()) {
      r.kept += f.value("objects", std::uint64_t{0});
      r.kept_bytes += f.value("bytes", std::uint64_t{0});
    }
    if (const json f = read(o.facts, kFactRemoteFollow); f.is_object()) {
      r.pushed += f.value("objects", std::uint64_t{0});
      r.pushed_bytes += f.value("bytes", std::uint64_t{0});
    }
    if (const json p = read(o.facts, kFactRemotePush); p.is_object()) {
      r.pushed += p.value("objects", std::uint64_t{0});
      r.pushed_bytes += p.value("bytes", std::uint64_t{0});
      r.repaired += p.value("repaired", std::uint64_t{0});
      r.notes += p.value("notes", std::uint64_t{0});
      r.dropped = r.dropped || p.value("dropped", false);
    }
  }
  return r;
}

void print_remote_cache(const RemoteCacheSettings& settings, const RemoteCacheReport& r, std::ostream& out) {
  if (settings.url.empty() || r.fetches == 0) return;
  std::string line = fmt::format("remote cache {}: {} of {} cells found their row; {} objects taken ({}), {} sent ({})",
                                 settings.url, r.rows_found, r.fetches, r.fetched, format_bytes(r.fetched_bytes),
                                 r.pushed, format_bytes(r.pushed_bytes));
  if (r.refused > 0) line += fmt::format(", {} refused (damaged or missing)", r.refused);
  if (r.indexes_refused > 0) {
    line += fmt::format(", {} row index{} refused (not signed by an accepted key: compiled here)", r.indexes_refused,
                        r.indexes_refused == 1 ? "" : "es");
  }
  if (!settings.write) {
    line += fmt::format("; {}; {} objects kept local ({}), none sent", settings.write_why, r.kept,
                        format_bytes(r.kept_bytes));
  }
  if (r.repaired > 0) line += fmt::format(", {} damaged sent again", r.repaired);
  if (r.notes > 0)
    line += fmt::format("; {} note{} in the cells' logs (the builds compiled locally where it failed)", r.notes,
                        r.notes == 1 ? "" : "s");
  if (r.dropped) line += "; dropped for the rest of the run after repeated failures (the cells' logs say why)";
  fmt::print(out, "{}\n", line);
}

std::shared_ptr<remote::Store> open_run_remote(const RemoteCacheSettings& settings, const System& system,
                                               std::vector<std::string>& notes) {
  if (settings.url.empty() || !system.open_remote) return nullptr;
  auto remote = system.open_remote(settings.url, system.env.value(settings.token_env));
  if (!remote) {
    notes.push_back(fmt::format("building without the remote cache: {}; {}", remote.error().what, remote.error().hint));
    return nullptr;
  }
  return *remote;
}

}  // namespace fabuild
