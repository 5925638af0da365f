#pragma once

// fabuild's side of the memory gate (objcache/memory_gate.h is fabuild-cc's): a cell whose row
// has recorded peaks (app/compile_share.h's RowCosts) asks the scheduler for jobs by those
// peaks, not by build.memory_per_thread_gb, and its compiles start while their own peaks fit in
// what the cell was granted. Measured beats guessed: the record replaces memory_per_thread_gb;
// build.max_jobs still caps MAX_JOBS.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/compile_share.h"
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
// wrapper on Linux (not a command cell, a library, ROCm's hipcc or a Windows cell).
bool gate_applies(const Cell& cell);

// `shape` gated: GB per job the larger of the smallest kernel's peak and the budget's memory per
// job slot (its cores over the nvcc threads), so that MAX_JOBS is as many compiles as could
// ever fit and the grant is about the memory the cell may use; memory_gate set, with a note.
void gate_by_recorded_peaks(JobSettings& shape, const KernelPeaks& peaks, const Budget& budget);

// FABUILD_CC_PEAKS for a cell compiling at `nvcc_threads`: each recorded unit by its absolute
// path under `tree`, the largest recorded peak for any other.
objcache::UnitPeaks unit_peaks_for(const RowCosts& costs, const std::filesystem::path& tree, int nvcc_threads);

}  // namespace fabuild
