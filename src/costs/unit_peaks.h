#pragma once

// fabuild's side of the memory gate (objcache/memory_gate.h is fabuild-cc's): a cell whose row
// has recorded peaks (costs/row_costs.h's RowCosts) asks the scheduler for jobs by those
// peaks, not by build.memory_per_thread_gb, and its compiles start while their own peaks fit in
// what the cell was granted. Measured beats guessed: the record replaces memory_per_thread_gb;
// a matrix that sets build.max_jobs keeps its word (no gate).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "costs/row_costs.h"
#include "engine/budget.h"
#include "matrix/cell.h"
#include "objcache/memory_gate.h"

namespace fabuild {

// A row's recorded kernel peaks, in MiB, for compiles at a given NVCC_THREADS.
struct KernelPeaks {
  double smallest_mb = 0;
  double median_mb = 0;
  double largest_mb = 0;
  std::size_t count = 0;
};
// nullopt: no kernel unit (.cu) with a recorded peak.
std::optional<KernelPeaks> kernel_peaks(const RowCosts& costs, int nvcc_threads);

// Whether a cell's compiles can go through the gate: a wheel built through the object cache's
// wrapper on Linux (not a command cell, a library, ROCm's hipcc or a Windows cell) whose matrix
// does not set build.max_jobs (the matrix's own word on how many compiles at once).
bool gate_applies(const Cell& cell);

// `shape` gated: GB per job the budget's memory over the most compiles that could ever run at
// once (its cores over the nvcc threads, or as many of the smallest kernel as the memory holds,
// whichever is fewer), so that the grant is the memory the cell may use; memory_gate set, with
// a note. The runner gives fabuild-cc that many slots and a wider MAX_JOBS (engine/launch.h).
void gate_by_recorded_peaks(JobSettings& shape, const KernelPeaks& peaks, const Budget& budget);

// The compiles that could ever run at once under the gate: the cores over the nvcc threads, or
// as many of the smallest kernel as the memory holds, whichever is fewer (at least 1).
int gate_slots(const KernelPeaks& peaks, double cores, double memory_gb, int nvcc_threads);

// How long the row's kernels take under the memory gate on `cores` cores and `memory_gb`, as a
// recorded row is built: ninja hands them out in the record's order, kGateWindow times the slots
// in flight, and the gate's own rule (objcache::gate_admits) starts them; a kernel takes its CPU
// seconds over the nvcc threads. The CI estimate of a recorded row (costs/ci_estimate.h). With
// `units`, those kernels are compiled, in that order (the whole row's as the build lists them, or
// one compile share's), under the gate the whole record sets (its slots come from the row's
// smallest kernel); one the record has no cost for takes the recorded kernels' mean CPU seconds,
// waits for the largest recorded peak and starts last, as the gate does (unit_peaks_for).
// nullopt: no kernel with a recorded peak.
std::optional<double> gated_kernel_seconds(const RowCosts& costs, int nvcc_threads, double cores, double memory_gb,
                                           const std::vector<std::string>* units = nullptr);

// One compile as the gate sees it: how long it runs, the peak it waits for (MiB) and its
// priority (recorded CPU seconds: the longest waiting that fits goes first; 0: last).
struct GatedUnit {
  double seconds = 0;
  std::uint64_t mb = 0;
  std::uint64_t priority = 0;
};

// When `units` end under the gate (objcache::gate_admits): handed out in their order, `window`
// (MAX_JOBS) of them in flight at most, at most `slots` running, each starting when its peak
// fits beside the running ones' in `budget_mb` (one alone always starts). What
// gated_kernel_seconds runs on a record; `fabuild model` runs it on a simulator's units.
double gate_schedule(const std::vector<GatedUnit>& units, int slots, std::uint64_t budget_mb, std::size_t window);

// wrapper_env::kPeaks for a cell compiling at `nvcc_threads`: each recorded unit by its absolute
// path under `tree`, with its recorded CPU seconds (the gate's priority); the largest recorded
// peak for any other.
objcache::UnitPeaks unit_peaks_for(const RowCosts& costs, const std::filesystem::path& tree, int nvcc_threads);

}  // namespace fabuild
