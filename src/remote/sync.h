#pragma once

// Moving a row's compiled kernels between the local object cache (objcache/store.h) and the
// remote tier (remote/store.h). fabuild does it on the host, before and after a cell's build:
// fabuild-cc stays a static program without network access, which a container started with
// --network none could not use anyway.
//
// On the remote, relative to its URL:
//   ac/<sha256 of row key/writer>
//                    one writer's index of the row (a writer: a cell of the row, by its Python
//                    tag): {"version": 1, "objects": {"results/ab/<hex>": "<sha256>", ...}}
//                    (paths as in the local cache, mapped to the SHA-256 of the file's content)
//   cas/<sha256>     a manifest or result file, named by the SHA-256 of its content
// Each writer keeps its own index because a row's cells may build at once on separate machines
// (--split-rows) and plain HTTP has no compare-and-swap: one shared index, read, extended and
// written back by two jobs at once, would keep only what the later one added.
// The layout is bazel-remote's (whose --disable_http_ac_validation lets it keep a JSON index):
// every blob is checked against its name before use, and only files of the local cache's own
// forms (a manifest that parses, a result whose own checksum holds) are written into it.

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "objcache/store.h"
#include "remote/signing.h"
#include "remote/store.h"

namespace fabuild::remote {

struct SyncTally {
  bool index_found = false;           // fetch: the remote had an index for the row
  std::uint64_t objects = 0;          // fetch: written into the local cache; push: sent
  std::uint64_t bytes = 0;            // ...their size
  std::uint64_t already = 0;          // fetch: the local cache had it; push: the remote had it
  std::uint64_t refused = 0;          // fetch: absent, damaged or tampered with; not used
  std::uint64_t repaired = 0;         // push: sent again over a damaged copy (also in `objects`)
  std::vector<std::string> damaged;   // fetch: SHA-256s whose remote copy did not match them
  std::uint64_t indexes_refused = 0;  // not signed by a key the run accepts (signing.h)
  // fetch: the writers whose indexes listed objects, with the key that signed each ("" unsigned)
  std::map<std::string, std::string> indexes_used;
  std::vector<std::string> notes;  // what went wrong, for the cell's log: never a build failure
};

// The remote key of `writer`'s index of the row.
std::string index_key(const std::string& row_key, const std::string& writer);

// Takes the row's objects, as the indexes of `writers` list them, from the remote into `local`,
// until `budget` is spent. An index that could not be read loses that writer's objects only; after
// two in a row the remote is taken as down and asked for no further index. What it writes into
// `local` is put on probation there (objcache/probation.h). With `trust` verifying,
// an index not signed by one of its keys for this row and writer is refused (a note), as if empty.
SyncTally fetch_row(Store& remote, const objcache::Store& local, const std::string& row_key,
                    const std::vector<std::string>& writers, std::chrono::milliseconds budget,
                    const IndexTrust* trust = nullptr);

// Sends the objects a cell's compiles used or stored (manifest key, result key), that the
// remote lacks, and adds them to `writer`'s index of the row. An object whose SHA-256 is in
// `damaged` (what the fetch found damaged) is sent whether or not the remote has a copy: the
// copy it has is the damaged one, which would cost every later runner a compile.
// With `trust`'s signer, the index it sends is signed; an index of its name that `trust` refuses
// is replaced.
SyncTally push_row(Store& remote, const objcache::Store& local, const std::string& row_key, const std::string& writer,
                   const std::vector<std::pair<std::string, std::string>>& used, std::chrono::milliseconds budget,
                   const std::set<std::string>& damaged = {}, const IndexTrust* trust = nullptr);

}  // namespace fabuild::remote
