#pragma once

// The plan: every selected cell with what it will be built on, with which settings, and where
// its wheel will go. `--dry-run` prints it; the build runs it.

#include <optional>
#include <string>
#include <vector>

#include "app/object_cache.h"
#include "app/options.h"
#include "engine/budget.h"
#include "engine/cell_env.h"
#include "matrix/expand.h"
#include "provision/toolchain.h"
#include "source/source.h"

namespace fabuild {

// A patch file a cell's source gets before its build (docs/packages.md, "Patches").
struct PatchFile {
  std::string name;    // as the matrix names it
  std::string path;    // absolute
  std::string sha256;  // of its content, when the plan was made
};

struct PlannedCell {
  Cell cell;
  std::vector<PatchFile> patches;
  std::string id;
  std::string label;
  std::string wheel_path;  // wheelhouse/fa2.8.3/torch2.8/cu128/flash_attn-...whl
  ToolchainPlan toolchain;
  SourcePlan source;
  JobSettings jobs;
  EnvList env;
};

struct Plan {
  std::string matrix_file;
  std::string package;
  std::string wheelhouse;
  std::size_t matrix_cells = 0;  // buildable cells in the whole matrix, before filters
  std::optional<Shard> shard;
  Budget budget;
  std::size_t at_once = 0;  // cells the scheduler starts together at the beginning
  std::vector<PlannedCell> cells;
  std::vector<DroppedCell> dropped;  // those the filters pick
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // e.g. which Python tags an abi3 cell's wheel serves
  // How cells without a command are built: the matrix's source, or a cell's own (an include's).
  SourceSpec source;
  [[nodiscard]] const SourceSpec& source_of(const Cell& cell) const { return cell.source ? *cell.source : source; }
  std::string torch_index;  // a URL, or an absolute directory of wheels (pip --find-links, no index)
  ContainerSpec container;  // how container cells run
  Frontend frontend = Frontend::kSetupPy;
  std::string matrix_dir;  // relative paths in the matrix (source.path) are from here
  ObjectCacheSettings cache;  // the compiler object cache (docs/performance.md)
};

// Loads, expands, filters, shards and settles. UserError on bad input.
Plan make_plan(const Options& options, const Resources& machine);

}  // namespace fabuild
