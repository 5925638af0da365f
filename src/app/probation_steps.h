#pragma once

// What a wheel cell does with the objects its row took from the remote that no build has proven
// yet (objcache/probation.h; docs/security.md, "Objects from the remote are on probation"):
// after its checks pass, the `cache-proven` step takes the objects its build used off
// probation; when its build or a check fails while objects of its row are on probation, the
// cell's retry (CellRun::retry) evicts them from the local cache, removes what the build left
// in its tree, and sends the cell back to its `build` step once, which compiles them here.

#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/object_cache.h"
#include "engine/facts.h"
#include "engine/runner.h"
#include "util/files.h"

namespace fabuild {

inline constexpr const char* kFactRemoteRetry = "remote_retry";  // {"step", "evicted"}: the cell built again

struct ProbationScope {
  std::string cache_dir;  // the local object cache
  std::string row_key;
  std::shared_ptr<CellCompiles> compiles;
  std::shared_ptr<Files> files;
  std::string log_path;  // the cell's
};

Step proven_step(ProbationScope scope);

// The retry of a cell whose failure in one of `steps` may come from objects on probation;
// `build_outputs`: what its build leaves that would keep the next build from compiling (the
// setup.py build directory, dist/).
std::function<std::string(const std::string&, const std::string&, Facts&)> probation_retry(
    ProbationScope scope, std::set<std::string> steps, std::vector<std::filesystem::path> build_outputs);

// The `cache-proven` step after the cell's checks (the steps so far), and its retry for a failure
// from `build` on (the remote's and the costs' steps aside).
void add_probation(CellRun& run, const ProbationScope& scope, std::vector<std::filesystem::path> build_outputs);

// The cells built again; one line, or nothing when none was.
void print_probation_retries(const std::vector<CellOutcome>& outcomes, std::ostream& out);

}  // namespace fabuild
