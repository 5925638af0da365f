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
  b.max_cells = spec.max_cells.value_or(0);
  b.origin =
      fmt::format("{} cores from {}, {:.1f} GB from {}", b.cores, spec.cores ? "budget.cores" : machine.cores_from,
                  b.available_gb, spec.memory_gb ? "budget.memory_gb" : machine.memory_from);
  return b;
}

JobSettings job_shape(const Cell& cell) {
  JobSettings s;
  const BuildSettings& build = cell.build();
  s.jobs_cap = build.max_jobs;
  if (cell.platform == Platform::kWinAmd64 && !build.max_jobs && !build.memory_per_thread_gb) {
    s.jobs_cap = 1;
    s.notes.push_back(
        "MAX_JOBS 1 on Windows: the Windows manual build's setting against out-of-memory, as MSVC + nvcc "
        "memory per job is not measured yet (build.memory_per_thread_gb or build.max_jobs replace it)");
  }
  if (cell.rocm()) {
    s.nvcc_threads = 0;
    s.gb_per_job = build.memory_per_thread_gb.value_or(kDefaultGbPerThread);
    return s;
  }
  const int archs = std::max<int>(1, static_cast<int>(cell.archs().size()));
  const int asked_threads = build.nvcc_threads.value_or(kDefaultNvccThreads);
  s.nvcc_threads = std::min(asked_threads, archs);
  if (s.nvcc_threads < asked_threads) {
    s.notes.push_back(fmt::format("NVCC_THREADS {} -> {}: nvcc splits a compile over its {} arch{} only", asked_threads,
                                  s.nvcc_threads, archs, archs == 1 ? "" : "s"));
  }
  s.gb_per_job = s.nvcc_threads * build.memory_per_thread_gb.value_or(kDefaultGbPerThread);
  s.max_jobs = 0;  // the scheduler's to set
  return s;
}

std::string jobs_text(const JobSettings& jobs) {
  return jobs.nvcc_threads > 0 ? fmt::format("{}x{}", jobs.max_jobs, jobs.nvcc_threads) : std::to_string(jobs.max_jobs);
}

}  // namespace fabuild
