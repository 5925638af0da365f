#pragma once

// `fabuild MATRIX --ci-matrix NAME`: the selected cells laid out as the jobs of a CI matrix,
// printed in the form the CI system NAME takes (app/ci_providers.h: GitHub Actions'
// `strategy.matrix`, a GitLab child pipeline, a Buildkite pipeline). One job
// per cell; when there are more cells than `ci.max_entries` (at most GitHub's 256), the cells
// are grouped into that many shards, balanced by expected cost (matrix/select.h). Each job
// carries the fabuild arguments that select exactly its cells (docs/ci.md).

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/options.h"
#include "app/plan.h"
#include "app/remote_cache.h"
#include "app/system.h"
#include "costs/ci_estimate.h"
#include "matrix/cell.h"
#include "util/environment.h"
#include "util/exit_code.h"

namespace fabuild {

struct CiJob {
  std::string name;  // the row ("fa2.8.3-torch2.8-cu128-cp310_cp311-linux_x86_64"), cell id, or "shard 3/256 (4 cells)"
  std::string runner;       // ci.runners' label for its platform, else ci.runner
  int timeout_minutes = 0;  // ci.setup_time + each cell's build.timeout or expected time, at most ci.max_timeout
  std::size_t cells = 0;
  std::string only;               // the cell id when the job builds one cell, else ""
  std::optional<Shard> shard;     // when cells are grouped
  std::string artifact;           // a name for its partial wheelhouse, unique in the matrix
  std::vector<std::string> args;  // fabuild arguments after MATRIX selecting exactly its cells
  std::size_t rows = 0;
  std::string cache_key;  // names its rows (16 hex): the key of a CI cache of its object cache
  // "compile": one compile share of a row (--compile-share K/N), filing nothing; "build": a
  // job that files wheels (a row's finishing job when it has shares).
  std::string stage = "build";
  int shares = 0;         // the row's compile shares (0: compiled in this job)
  std::string finishing;  // a compile share's: the name of its row's finishing job
  // A "verify" job: the artifact whose wheelhouse it checks (its row's build job's), "" when it
  // takes the published one (a wheel filed by an earlier run); the torch series it checks.
  std::string needs_artifact;
  std::string torch;
  double expected_s = 0;  // what its runner time was counted as
};

struct CiMatrix {
  std::vector<CiJob> jobs;
  std::vector<std::string> warnings;     // timeouts cut to ci.max_timeout
  double runner_seconds = 0;             // the jobs' expected time, summed: setup and cells, uncapped
  std::size_t recorded_rows = 0;         // rows timed from recorded unit costs (the others: guessed)
  std::size_t gated_rows = 0;            // ...of which by the memory gate's schedule on the runner
  std::size_t borrowed_rows = 0;         // ...of which by another torch series' record (costs/borrowed.h)
  std::size_t loaded_rows = 0;           // ...of which by a record that says how busy its machine was
  double least_busy = 1, most_busy = 0;  // ...how busy, those records' least and most (0 to 1)
  std::size_t timed_rows = 0;
  std::size_t setup_rows = 0;  // rows whose jobs' setup was recorded (the others: ci.setup_time)
  double longest_setup_s = 0;  // ...the longest of those
  double graph_seconds = 0;    // when the jobs end on ci.max_parallel runners (one job per row only)
  bool remote = false;         // the jobs share a remote object cache: none keeps a CI cache of its own
};

// `cells` are the selected cells (filters applied, not sharded); `filters` the filters that
// selected them, repeated in each shard job's args so that the job selects the same cells.
// With Rows::kKeep (the default; --split-rows gives kSplit) a job holds whole rows: one job per
// row when they fit in ci.max_entries, else shards of whole rows; each platform's cells go to
// jobs of their own, on the platform's runner.
// A row over the cap (costs/ci_estimate.h) becomes compile jobs and a finishing job that needs them
// (one job per row only: not when rows are grouped into shards).
CiMatrix plan_ci_jobs(const std::vector<Cell>& cells, const CiSpec& ci, const Filters& filters, Rows rows = Rows::kKeep,
                      const CiCosts& costs = {});

// The command: loads and filters the matrix, prints the JSON on one line (for $GITHUB_OUTPUT).
// Exit 3 when nothing is selected, unless --allow-empty ({"include": []}).
// `remote_env` is where FABUILD_CACHE_REMOTE is read (a remote allows compile shares);
// `costs` finds the rows' recorded unit costs for the cells (app/recorded_costs.h).
ExitCode print_ci_matrix(const Options& options, std::ostream& out, const System& system,
                         const std::function<CiCosts(const std::vector<Cell>&, const RemoteCacheSettings&,
                                                     const std::vector<Version>&)>& costs);

// The torch checks of stable-ABI cells as jobs of their own (docs/stable-abi.md): a cell's build
// job checks its wheel under the torch it is built against only (--no-sweep), and one job per
// other release of its window checks the filed wheel (stage "verify", --verify-torch S: no
// compiler, no toolkit, one torch environment on the runner's disk), taking the build job's
// artifact. A cell whose wheel the wheelhouse has filed already gets no build job, only a job
// for each release its proofs lack (plan.pending_checks).
void add_torch_checks(CiMatrix& matrix, const Plan& plan);

// The runner label for `platform`'s cells: ci.runners' for it, else ci.runner.
std::string runner_for(const CiSpec& ci, Platform platform);

}  // namespace fabuild
