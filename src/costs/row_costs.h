#pragma once

// Compile shares and recorded unit costs (docs/ci.md, "Compile shares"). A row too long for one
// CI job is compiled by N share jobs, each the kernel units of its share, and one finishing job
// that takes their objects from the remote cache. The split is deterministic: the same source
// and the same record give every runner the same shares, balanced by each unit's cost, recorded
// by earlier builds of the row (wall and CPU time, peak memory of each compile), else guessed.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "matrix/cell.h"
#include "objcache/share.h"
#include "util/files.h"

namespace fabuild {

// Cells that compile the same kernels: one row (matrix/select.h's row_of: version, torch, CUDA,
// archs, platform, ABI, profile) of one package, toolkit, provision, env and patches; they
// differ at most in their Python tag.
std::string compile_row(const Cell& cell);
// The row's key, the same on every machine: what the object cache's remote tier
// (app/remote_cache.h), the row records here and the CI estimate are keyed by.
std::string remote_row_key(const Cell& cell);

// One compile as fabuild-cc's tally line reports it (objcache/protocol.h): its source (absolute),
// wall and CPU time, and what its processes held at once.
struct MeasuredCompile {
  std::string source;
  std::uint64_t wall_ms = 0, cpu_ms = 0, peak_kb = 0;
  int busy_pct = -1;  // how busy the machine was meanwhile, 0-100; -1: not said
};

// One compile, as measured by fabuild-cc.
struct UnitCost {
  double wall_s = 0;
  double cpu_s = 0;
  double peak_mb = 0;  // what its processes held at once (objcache/tree_memory.h)...
  // ...at this NVCC_THREADS (a kernel's): nvcc runs that many stages side by side, each holding
  // about as much as one alone (measured: docs/performance.md, "NVCC_THREADS and memory"). A
  // record without it predates the tree's peak: its peak was the largest single process, a
  // stage's, so it reads as 1.
  int threads = 1;
  // How busy the machine that measured it was meanwhile, every processor of it, 0 to 1
  // (objcache/spawn.h's host_busy): a compile on a loaded machine takes more CPU time than on an
  // idle one (costs/contention.h). nullopt: a record from before it was kept.
  std::optional<double> busy = std::nullopt;
};

// A unit's recorded peak for a compile at `nvcc_threads`: a kernel's (.cu) scaled by the threads
// over those it was measured at; any other unit's as recorded.
double peak_mb_at(const std::string& unit, const UnitCost& cost, int nvcc_threads);

// A CI job's setup, measured: from the job's start (FABUILD_JOB_STARTED) to its first
// compile: the runner's dependencies, fabuild, the builder image or toolkit, torch, the source
// and, in a finishing job, the objects fetched from the remote (costs/job_setup.h).
struct SetupTime {
  double seconds = 0;
  std::string recorded;  // as RowCosts::recorded: "2026-11-26T15:40:02Z on runner-12"
};

// The setups a row's record keeps: its jobs' latest, the plan timing by the longest of them.
inline constexpr std::size_t kSetupsKept = 8;

// What a row's compiles cost, by unit: its source path relative to the source tree
// ("csrc/flash_attn/src/flash_fwd_hdim128_fp16_sm80.cu"); and how long its jobs took to reach
// their first compile.
struct RowCosts {
  std::map<std::string, UnitCost> units;
  std::string recorded;           // when (UTC, ISO 8601), by whom: "2026-11-26T15:40:02Z on builder (16 cores)"
  std::vector<SetupTime> setups;  // oldest first, at most kSetupsKept
  // The kernel units the row's build compiles (its setup.py's, as the units step read them),
  // sorted: those `units` has no cost for yet included, so a plan splits and times them all.
  std::vector<std::string> built;
  [[nodiscard]] bool empty() const { return units.empty() && setups.empty(); }
  // The longest setup kept: a job's timeout must hold the slowest runner's; none without one.
  [[nodiscard]] std::optional<double> setup_s() const;
  // Adds a measured setup (one already kept, by `recorded`, is not added twice); the oldest beyond
  // kSetupsKept go. Returns whether it was added.
  bool add_setup(const SetupTime& setup);
  // The kernel units' (.cu) CPU seconds, summed; and their largest peak at `nvcc_threads`.
  [[nodiscard]] double kernel_cpu_s() const;
  // Their mean: what a kernel the record has no cost for is taken to cost; none without one.
  [[nodiscard]] std::optional<double> kernel_mean_cpu_s() const;
  [[nodiscard]] double kernel_peak_mb(int nvcc_threads) const;
};

// Adds to `mine` what `theirs` (another runner's record of the row) has that it has not: units
// it did not measure and setups it did not keep. Returns how many of each it added.
struct CostsAdded {
  std::size_t units = 0;
  std::size_t setups = 0;
};
CostsAdded add_theirs(RowCosts& mine, const RowCosts& theirs);

nlohmann::json to_json(const RowCosts& costs);
std::optional<RowCosts> row_costs_from_json(const std::string& text);  // nullopt: not a record

// Where a row's record lives in fabuild's cache (`row_key`: app/remote_cache.h's remote_row_key).
std::filesystem::path row_costs_path(const std::filesystem::path& cache_root, const std::string& row_key);
// Read and written through `files` (the System's).
std::optional<RowCosts> read_row_costs(const Files& files, const std::filesystem::path& path);
// Written whole (atomically); a failure is ignored: a record only makes plans better.
void save_row_costs(Files& files, const std::filesystem::path& path, const RowCosts& costs);

// Adds the measured compiles of a tally (misses: real compiles) to `costs`, named relative to
// `tree`, kernels as compiled at `nvcc_threads`; a later measurement of a unit replaces the
// earlier. Returns how many it added.
std::size_t record_compiles(RowCosts& costs, const std::vector<MeasuredCompile>& compiles,
                            const std::filesystem::path& tree, const std::string& recorded, int nvcc_threads);

// The kernel units of a source tree: its .cu files outside bundled libraries, tests and examples
// (cutlass, third_party, test*, example*, benchmark*, build), relative to `tree`, sorted.
std::vector<std::string> kernel_units(const Files& files, const std::filesystem::path& tree);
// Whether a unit (a source's name or path) is a kernel unit: a .cu file.
bool kernel_unit(const std::string& name);

// A unit's cost with no record, a forward kernel's being 1, as FlashAttention's measured rows
// have them (bench/data/*-units.tsv: CPU seconds over the mean of the row's forward kernels): a
// backward kernel (its name holds "bwd") 1.4 — FA2 1.23-1.37, FA3 1.64 —, a split-KV forward
// kernel ("split") 1.3 — FA2 1.48-1.77, FA3 1.01. `backward_off`: the cell's profile turns
// BACKWARD off, and a backward kernel that the build still compiles (FlashAttention 2 compiles
// every file, its bodies switched off) only reads its headers: 0.05 (FA3's took seconds; in
// the replays of FA2's forward-only row, 0.05 to 0.25 say the same time left within 10 %).
double guessed_cost(const std::string& unit, bool backward_off = false);
// The same in words, for the logs: "guessed (1 a forward kernel, 1.4 a backward one, ...)".
std::string guessed_costs_said(bool backward_off);

struct ShareSplitPlan {
  std::map<std::string, int> share_of;  // unit -> 1..count
  std::map<std::string, double> cost;   // unit -> the cost the split gave it
  std::vector<double> load;             // per share, in the cost's unit
  bool measured = false;                // costs from a record (else guessed)
  std::size_t recorded_units = 0;       // of the units, how many the record had
};

// Longest first, each to the least loaded share (ties: the lower share); costs: the record's
// CPU seconds where it has the unit, else the mean of its recorded kernels (guessed_cost with
// no record). `units` and the result are in the same naming.
ShareSplitPlan split_units(const std::vector<std::string>& units, const RowCosts* costs, int count,
                           bool backward_off = false);

// The split as fabuild-cc reads it (objcache/share.h): units by absolute path under `tree`.
objcache::ShareSplit share_split_for(const ShareSplitPlan& plan, const std::filesystem::path& tree, int index,
                                     int count);

}  // namespace fabuild
