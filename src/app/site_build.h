#pragma once

// Cells that fabuild builds itself (no `command:`), on a site (site.h): this host, or a
// container of the CUDA set's image (container_site.h). Find the toolkit and the Python there,
// make the Python environment, then per cell copy the source, build the wheel with the
// package's contract, verify it, import it, and file it with its SHA256SUMS and manifest entry.
// One code path for both provisioners: a container cell's steps are the same, run in its
// container.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/object_cache.h"
#include "app/plan.h"
#include "app/system.h"
#include "engine/runner.h"
#include "util/entry_lock.h"

namespace fabuild {

struct SiteBuild {
  std::vector<CellRun> environments;       // run first: one per Python environment to make or toolkit to install
  std::vector<CellRun> cells;              // then these
  std::vector<std::size_t> cell_index;     // plan index of each of `cells`
  std::vector<CellOutcome> settled;        // cells that need no run: failed early or up to date
  std::vector<std::size_t> settled_index;  // their plan indexes
  // Which of `environments` (indexes) each of `cells` needs (its Python environment, a CUDA
  // toolkit to install), to fail it when one of those failed.
  std::vector<std::vector<std::size_t>> needs;
  std::vector<std::string> notes;  // e.g. a filed wheel that changed and is built again
  // Whether the cells compile through the object cache, and each one's count of how (by cell id:
  // what its file step recorded makes the run's OBJECT CACHE table, object_cache_report).
  bool object_cache = false;
  std::map<std::string, std::shared_ptr<CellCompiles>> compiles;
  // The shared cache entries the run uses (environments, toolkits, sources), held till it ends.
  std::vector<EntryUse> uses;
};

// Plans the runs for plan.cells[i] for each i in `which`. `force` rebuilds filed wheels.
SiteBuild plan_site_build(const Plan& plan, const std::vector<std::size_t>& which, bool force, const System& system);

}  // namespace fabuild
