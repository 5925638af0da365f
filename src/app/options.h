#pragma once

#include <optional>
#include <string>
#include <vector>

#include "matrix/axis_set.h"
#include "matrix/select.h"

namespace fabuild {

enum class OutputFormat { kTable, kJson };

// Everything the command line says, parsed; the app layer acts on it.
struct Options {
  std::string matrix;
  std::vector<AxisSet> sets;  // --set AXIS=VALUES: axes of the matrix replaced for this run
  bool dry_run = false;
  bool list = false;
  OutputFormat format = OutputFormat::kTable;
  Filters filters;
  std::optional<Shard> shard;
  // --compile-share K/N: compile the K-th of N shares of one row's kernel units for the remote
  // cache, file nothing (docs/ci.md, "Compile shares").
  std::optional<Shard> compile_share;
  // --share-costs DIGEST|none: the row's unit-cost record the split uses, as the plan saw it
  // (its SHA-256 on the remote), so that every share of a release, re-runs too, splits alike.
  std::string share_costs;
  bool strict = false;      // --strict: cells that collapse into another are an error, not dropped
  bool split_rows = false;  // --split-rows: shards and CI jobs may split a row's Python tags
  [[nodiscard]] Rows rows() const { return split_rows ? Rows::kSplit : Rows::kKeep; }
  bool allow_empty = false;
  std::string ci_matrix;  // --ci-matrix github: print the CI matrix instead of building ("" = not asked)
  bool fail_fast = false;
  bool prepare = false;  // --prepare: make the cells' Python environments and toolkits, build nothing
  // --verify-torch 2.12,2.13: check the selected cells' filed wheels under these torch series
  // (releases of the index of each wheel's CUDA major), build nothing (docs/stable-abi.md).
  std::vector<std::string> verify_torch;
  // --no-sweep: a stable-ABI cell's wheel is checked under the torch it is built against only
  // (CI: the other releases are --verify-torch jobs of their own).
  bool no_sweep = false;
  bool force = false;
  bool rebuild_check = false;  // --rebuild-check: build the filed cells again and compare bytes (app/rebuild_check.h)
  bool no_cache = false;       // --no-cache: compile without the object cache
  std::optional<std::string> cache_dir;  // --cache-dir
  std::string cache_size;                // --cache-size, as given ("20G"); "" = the matrix's or the default
  bool wait_lock = false;                // --wait-lock: queue behind another run on the wheelhouse instead of exit 4
  std::optional<std::string> output_dir;
  // --torch-index / FABUILD_TORCH_INDEX: the matrix's torch_index for this run (an index base URL,
  // or a directory of wheels relative to the working directory).
  std::optional<std::string> torch_index;
  std::optional<double> cores;
  std::optional<double> memory_gb;
  std::optional<int> max_cells;  // -j: most cells at once
  bool verbose = false;
  bool quiet = false;
};

}  // namespace fabuild
