#include "engine/budget.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace fabuild {

Budget make_budget(const Resources& machine, const BudgetSpec& spec) {
  Budget b;
  b.cores = spec.cores.value_or(machine.cores);
  b.available_gb = spec.memory_gb.value_or(machine.memory_gb);
  b.reserve_gb = spec.reserve_gb.value_or(std::max(0.15 * b.available_gb, 4.0));
  b.memory_gb = std::max(0.0, b.available_gb - b.reserve_gb);
  b.max_cells = spec.jobs.value_or(0);
  b.origin = fmt::format("{} cores from {}, {:.1f} GB from {}", b.cores, spec.cores ? "budget.cores" : machine.cores_from,
                         b.available_gb, spec.memory_gb ? "budget.memory_gb" : machine.memory_from);
  return b;
}

JobSettings settle_alone(const Cell& cell, const Budget& budget) {
  JobSettings s;
  const int archs = std::max<int>(1, static_cast<int>(cell.archs.size()));
  const int asked_threads = cell.build.nvcc_threads.value_or(kDefaultNvccThreads);
  s.nvcc_threads = std::min(asked_threads, archs);
  if (s.nvcc_threads < asked_threads) {
    s.notes.push_back(fmt::format("NVCC_THREADS {} -> {}: nvcc splits a compile over its {} arch{} only", asked_threads,
                                  s.nvcc_threads, archs, archs == 1 ? "" : "s"));
  }
  const double per_thread = cell.build.memory_per_thread_gb.value_or(kDefaultGbPerThread);
  s.gb_per_job = s.nvcc_threads * per_thread;

  const int by_memory = static_cast<int>(std::floor(budget.memory_gb / s.gb_per_job));
  const int by_cores = std::max(1, static_cast<int>(std::floor(budget.cores / s.nvcc_threads)));
  const int fits = std::min(by_memory, by_cores);
  const int cap = cell.build.max_jobs.value_or(fits);
  s.max_jobs = std::max(1, std::min(cap, fits));
  if (fits < 1) {
    s.notes.push_back(fmt::format("the budget's {:.1f} GB holds less than one job ({:.1f} GB); running MAX_JOBS=1 anyway",
                                  budget.memory_gb, s.gb_per_job));
  } else if (cell.build.max_jobs && *cell.build.max_jobs > fits) {
    s.notes.push_back(fmt::format("max_jobs {} -> {}: {} jobs x {:.1f} GB = {:.0f} GB, the budget holds {:.1f} GB and {} cores",
                                  *cell.build.max_jobs, s.max_jobs, *cell.build.max_jobs, s.gb_per_job,
                                  *cell.build.max_jobs * s.gb_per_job, budget.memory_gb, budget.cores));
  }
  return s;
}

}  // namespace fabuild
