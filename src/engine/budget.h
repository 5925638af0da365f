#pragma once

// The machine's budget for builds and what one cell gets of it (docs/budget.md).

#include <string>
#include <vector>

#include "matrix/cell.h"
#include "util/resources.h"

namespace fabuild {

struct Budget {
  double cores = 1;
  double memory_gb = 0;  // for builds: available - reserve
  double available_gb = 0;
  double reserve_gb = 0;
  int max_cells = 0;   // most cells at once; 0 = no cap
  std::string origin;  // "cgroup cpu.max, MemAvailable" / "budget: in the matrix"
};

// Defaults: cores and memory as detected; reserve max(15 %, 4 GB) of what is available.
Budget make_budget(const Resources& machine, const BudgetSpec& spec);

constexpr int kDefaultNvccThreads = 2;
constexpr double kDefaultGbPerThread = 5.0;

// One cell's compile settings.
struct JobSettings {
  int max_jobs = 1;
  int nvcc_threads = 1;
  double gb_per_job = 0;           // memory model: working nvcc threads x GB per thread
  std::vector<std::string> notes;  // why settings differ from what was asked
  [[nodiscard]] double peak_gb() const { return max_jobs * gb_per_job; }
};

// A cell's jobs before the scheduler sets MAX_JOBS: nvcc's --threads splits one compile
// over its -gencode targets, so only min(NVCC_THREADS, archs) threads work at once and each
// holds about memory_per_thread_gb. NVCC_THREADS is lowered to that, with a note.
JobSettings job_shape(const Cell& cell);

}  // namespace fabuild
