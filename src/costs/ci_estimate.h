#pragma once

// How long a row takes on a CI runner, and into how many compile shares (docs/ci.md, "Compile
// shares") it goes so that no job runs past ci.max_timeout. A row's time comes from its
// recorded unit costs (costs/row_costs.h: the CPU seconds of its kernel compiles, spread over
// the runner's cores as its memory allows) when a record exists, else from ci.time_per_arch ×
// its archs (or the matrix's build.timeout), a guess.

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "costs/row_costs.h"
#include "matrix/cell.h"
#include "matrix/spec.h"
#include "util/version.h"

namespace fabuild {

// A share job aims at this part of ci.max_timeout at most: estimates are estimates.
inline constexpr double kShareFill = 0.8;

// A job timed from recorded unit costs gets this much more than its expected time as its
// timeout: runners differ from the ones that recorded, and a gated share's schedule is a model.
// Measured on real FlashAttention 2.8.3 rows (docs/performance.md): shares took 0.88-1.10 of
// their model's time on the machine whose record they were timed by, and 1.10-1.56 on another
// (its compiles took a median 1.16 times the record's CPU; the gate's waits did the rest), where
// one share ran past 1.5 times and was cancelled.
inline constexpr double kRecordedTimeoutMargin = 2.0;
// No job's timeout below this: a runner's own start (checkout, caches) varies by minutes.
inline constexpr int kLeastTimeoutMinutes = 10;

// The memory gate's schedule of a recorded row's compile shares (ci_estimate.cpp).
struct GatedShares;

struct CiCosts {
  std::map<std::string, RowCosts> rows;  // by remote_row_key
  // By remote_row_key: the SHA-256 of the remote's record of the row, which its compile jobs
  // split by (--share-costs); a row without one splits by guessed costs ("none").
  std::map<std::string, std::string> digests;
  // Rows may be compiled in shares: a remote cache is set and the run may write it (a share
  // exists to send its objects there).
  bool remote = false;
  // By remote_row_key: a row with no record of its own, planned by the record of the same kernels
  // built for this torch series (costs/borrowed.h); `rows` and `digests` hold that record.
  std::map<std::string, Version> borrowed;
  // Why the remote's records could not be read (its requests failed until it was dropped); "".
  std::string remote_trouble;
};

struct RowTime {
  double first_s = 0;   // the row's first cell, alone on the runner
  double kernel_s = 0;  // of which its kernel compiles (what shares split)
  double tag_s = 0;     // a cell of the row whose kernels all come from the cache (a later tag)
  double setup_s = 0;   // a job's before its first compile: recorded (the longest kept), else ci.setup_time
  bool recorded = false;
  bool gated = false;           // kernel_s is the memory gate's schedule of the recorded units
  bool setup_recorded = false;  // setup_s was measured by the row's earlier jobs
  // A gated row's record and runner: each compile share timed as the gate runs its own units.
  std::shared_ptr<const GatedShares> gate;
  // How busy the machine that recorded the row was (costs/contention.h: its units' CPU-weighted
  // mean; none where the record does not say), and the load its compiles were timed at.
  std::optional<double> recorded_busy;
  double busy = 1;
};

// What is not a compile in a cell whose kernels are all hits: the link, the wheel, its checks.
// Measured on the GPU machine: an all-hit FlashAttention 2.8.3 cell took 72 s, 35 s of it its
// API file's compile (docs/performance.md).
inline constexpr double kTagStepsS = 37;

// The row's first cell's time; `row` holds its cells, first first.
RowTime row_time(const std::vector<Cell>& row, const CiSpec& ci, const CiCosts& costs);

// The runner a recorded row is timed on: its cores and memory, which fixed slots are sized by
// (the largest kernel's peak at the kernels' NVCC_THREADS); and, when the memory gate builds the
// row, what a job there is granted (the budget: the memory less the reserve) and its threads.
struct GateGrant {
  double cores = 1;
  double memory_gb = 0;
  int nvcc_threads = 1;
};
struct RunnerShape {
  double cores = 1;
  double memory_gb = 0;
  int nvcc_threads = 1;
  std::optional<GateGrant> gate;
};

// A recorded row's time on `runner`, setup not included (setup_s 0): its kernels under the gate
// when `runner.gate` is set and the record has peaks, else on fixed slots; a later tag's time
// from its other units and kTagStepsS. What row_time gives a recorded row, and what `fabuild
// model` (costs/model_json.h) times a simulator's rows by. nullopt: no kernel with a cost.
std::optional<RowTime> recorded_row_time(const RowCosts& record, const RunnerShape& runner);

// A whole row in one job: setup, its first cell, and kExtraTagCost of it per other tag.
double whole_row_seconds(const RowTime& t, std::size_t tags);

// What a compile job of the row passes as --share-costs: its record's digest, or "none".
std::string share_costs_arg(const Cell& first, const CiCosts& costs);

// How many compile shares the row gets: 0 when it is built in one job (it fits, shares are off,
// no remote is set, or its cells are not fabuild's own wheel builds).
int compile_shares_for(const std::vector<Cell>& row, const RowTime& t, const CiSpec& ci, const CiCosts& costs);
// The share rule alone: 0 when the row's `tags` fit kShareFill of `max_timeout_s` in one job (or
// its setup leaves no room), else the fewest shares whose jobs fit it (at least 2).
int shares_to_fit(const RowTime& t, std::size_t tags, double max_timeout_s);

// A row as --ci-matrix lays it out: its time, its tags and its compile shares (0: one job).
struct RowPlan {
  RowTime time;
  std::size_t tags = 1;
  int shares = 0;
};

// When the job graph ends on `runners` runners at once, jobs taken in order as runners free up:
// the nightly's first stage (every compile job, and the rows built whole beside them), then its
// second (the finishing jobs: GitHub's `needs:` is the whole first stage's).
double graph_seconds(const std::vector<RowPlan>& rows, int runners);
// A job graph in stages (each stage's jobs in order, a stage starting once the one before it has
// ended) on `runners` runners: what graph_seconds replays, and `fabuild model`'s "graph".
double stages_seconds(const std::vector<std::vector<double>>& stages, int runners);

// Fixed slots (a row with no record of peaks, or one the gate does not build): the units a
// runner compiles at once, its cores over the nvcc threads, fewer when the largest kernel's peak
// at those threads (MiB; 0: none recorded) says its memory holds fewer; at least 1 each.
struct FixedSlots {
  int slots = 1;
  int by_cores = 1;
  int by_memory = 0;  // 0: no peak to size by
};
FixedSlots fixed_slots(double cores, double memory_gb, double largest_peak_mb, int nvcc_threads);

// Jobs (or units) in order, each on the runner (slot) that frees up first: when the last ends.
// What each stage of graph_seconds is, and a job's units on fixed slots, longest first.
double list_schedule(const std::vector<double>& jobs, int runners);

// The jobs' time summed (runner time).
double runner_seconds(const std::vector<RowPlan>& rows);

// Adds the extra shares (0 to 8 a split row) that make the graph end soonest on ci.max_parallel
// runners: the least shares that fit the cap may leave the last wave of runners half idle, and
// filling it may take the longest rows at few shares and the others at many, so that a wave of
// short share jobs fills the runners the long ones leave. Tried: every two-level plan (the
// longest rows at one count, the rest at another), then from the soonest one row at a time to
// any count while the graph ends sooner. Kept: the least runner time within 1 % of the soonest
// end. The runner time may grow by a tenth at most (each share job has its setup); at most
// ci.max_entries entries in the first stage.
void balance_shares(std::vector<RowPlan>& rows, const CiSpec& ci);

// The share jobs of a row in `shares` shares, share 1 first: setup and its part of the kernels.
// A gated row's shares split its record's kernels as the shares will (split_units: recorded
// cost, longest first, to the least loaded) and each is timed under the gate on its runner (a
// share's last compiles may run alone); else each takes an even part of the kernels' time.
// share_job_seconds: the longest of them. The finishing job: setup and every tag's cell as if
// each were all cache hits (kExtraTagCost of the first cell each).
std::vector<double> share_jobs_seconds(const RowTime& t, int shares);
double share_job_seconds(const RowTime& t, int shares);
double finishing_job_seconds(const RowTime& t, std::size_t tags);

}  // namespace fabuild
