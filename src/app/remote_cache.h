#pragma once

// The object cache's remote tier in a build (docs/performance.md, "Sharing the cache between
// machines"): before a cell compiles, a `cache-fetch` step takes its row's kernels from the
// remote into the local cache; after, a `cache-push` step sends the ones it compiled or used
// that the remote lacks. Both run on the host (remote/sync.h), have a time budget, and turn
// every problem into a note in the cell's log: a remote that is down, slow, answers 5xx or
// serves a damaged object means a local compile, never a failed cell.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/object_cache.h"
#include "app/system.h"
#include "costs/row_costs.h"
#include "engine/runner.h"
#include "matrix/cell.h"
#include "matrix/spec.h"
#include "remote/signing.h"
#include "remote/store.h"
#include "util/environment.h"
#include "util/files.h"

namespace fabuild {

inline constexpr const char* kDefaultRemoteTokenEnv = "FABUILD_CACHE_REMOTE_TOKEN";
inline constexpr const char* kFactRemoteFetch = "remote_fetch";    // the cache-fetch step: JSON object
inline constexpr const char* kFactRemotePush = "remote_push";      // the cache-push step: JSON object
inline constexpr const char* kFactRemoteFollow = "remote_follow";  // sent while compiling: JSON object
inline constexpr const char* kFactRemoteKept = "remote_kept";      // read-only: compiled here, not sent

struct RemoteCacheSettings {
  std::string url;        // "" = no remote tier
  std::string from;       // "FABUILD_CACHE_REMOTE", "cache.remote in matrix.yaml:4", for the plan
  std::string token_env;  // the variable holding the bearer token
  std::chrono::milliseconds fetch_budget{std::chrono::minutes(5)};
  std::chrono::milliseconds push_budget{std::chrono::minutes(5)};
  bool write = true;         // whether this run sends anything (app/remote_trust.h)
  std::string write_why;     // "read-only: untrusted, a pull_request run on GitHub Actions ..."
  remote::IndexTrust trust;  // the keys it signs with and accepts
};

// FABUILD_CACHE_REMOTE (a CI secret) over the matrix's cache.remote; nothing when the object
// cache is off. Whether the run writes and which keys it uses: app/remote_trust.h. Throws a
// config error (exit 2) for a FABUILD_CACHE_REMOTE that is not a URL, or a key that is not one.
RemoteCacheSettings remote_cache_settings(const CacheSpec& spec, bool object_cache_on, const Environment& env,
                                          const Files& files);

// The remote tier for a run's builds (null: none set, or it could not be opened; `notes` then
// says why), guarded: dropped for the run after repeated failures (remote/guard.h), so that
// one bad server costs the run seconds, not each cell.
std::shared_ptr<remote::Store> open_run_remote(const RemoteCacheSettings& settings, const System& system,
                                               std::vector<std::string>& notes);

// One name per row: remote_row_key (costs/row_costs.h), the same on every machine.
// The cell's name among its row's writers (remote/sync.h: each writes an index of its own): its
// Python tag. A fetch reads the index of every Python tag fabuild knows, so that a job that
// builds one tag of a row finds what the jobs of its other tags sent.
std::string remote_writer(const Cell& cell);
std::vector<std::string> remote_writers();

// A compile share's writer name: "share3" (costs/row_costs.h).
std::string share_writer(int index);
// The share writers of a row that some share job said exist (a "shares" record on the remote:
// the most shares any job of the row was one of); none when the remote has no such record or
// does not answer.
std::vector<std::string> share_writers(remote::Store& store, const std::string& row_key);
// Records that the row has `count` shares (kept when the remote says more already).
Expected<void> mark_shares(remote::Store& store, const std::string& row_key, int count);

// The row's recorded unit costs on the remote (costs/row_costs.h), as JSON text; nullopt when
// there is none or the remote does not answer. `share`: what compile share K measured (kept
// apart, so that the split every share job reads stays the same during a release; the row's
// next ordinary build adds it to the row's record); 0: the row's record.
std::optional<std::string> fetch_row_costs(remote::Store& store, const std::string& row_key, int share = 0);
Expected<void> push_row_costs(remote::Store& store, const std::string& row_key, const std::string& json_text,
                              int share = 0);
// A row's record by the SHA-256 of its text (every record sent is also kept under its digest:
// what a release's plan saw stays there for its share jobs); nullopt when absent or altered.
std::optional<std::string> fetch_costs_by_digest(remote::Store& store, const std::string& digest);
// How many shares the row's "shares" record names (0: none).
int recorded_shares(remote::Store& store, const std::string& row_key);

// The steps around a cell's compile; `local_dir` is the local object cache, `compiles` the cell's
// compile tally (object_cache.h): the push sends the objects its build compiled or used.
// `only_writer`: read that writer's index alone (a compile share run again takes back what it
// sent, not the whole row); "": every Python tag's and every share's. `trust`: the keys
// (the fetch uses only indexes they accept; the push signs). `files` (the System's) writes what
// they did in the cell's log.
Step remote_fetch_step(std::shared_ptr<remote::Store> store, std::string local_dir, std::string row_key,
                       std::chrono::milliseconds budget, std::shared_ptr<Files> files, std::string only_writer,
                       std::shared_ptr<const remote::IndexTrust> trust);
Step remote_push_step(std::shared_ptr<remote::Store> store, std::string local_dir, std::string row_key,
                      std::string writer, std::shared_ptr<CellCompiles> compiles, std::chrono::milliseconds budget,
                      std::shared_ptr<Files> files, std::shared_ptr<const remote::IndexTrust> trust);
// A read-only run's step in the push's place: what the cell compiled here and would have sent,
// kept in the local cache (the fact remote_kept).
Step remote_kept_step(std::shared_ptr<CellCompiles> compiles);

struct RemoteCacheReport {
  std::uint64_t rows_found = 0;  // fetches that found the row's index
  std::uint64_t fetches = 0;
  std::uint64_t fetched = 0, fetched_bytes = 0, refused = 0;
  std::uint64_t pushed = 0, pushed_bytes = 0, repaired = 0;  // repaired: sent again over a damaged copy
  std::uint64_t kept = 0, kept_bytes = 0;                    // read-only: compiled here, not sent
  std::uint64_t indexes_refused = 0;                         // not signed by an accepted key
  std::uint64_t notes = 0;
  bool dropped = false;  // the run stopped using the remote after repeated failures (remote/guard.h)
};
// From the outcomes' facts.
RemoteCacheReport remote_cache_report(const std::vector<CellOutcome>& outcomes);
// One line after the object cache's table.
void print_remote_cache(const RemoteCacheSettings& settings, const RemoteCacheReport& report, std::ostream& out);

}  // namespace fabuild
