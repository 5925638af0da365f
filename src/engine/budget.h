#pragma once

// The machine's budget for builds and what one cell gets of it (docs/budget.md).

#include <optional>
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
// A gated cell's MAX_JOBS over the compiles it may run at once: ninja hands fabuild-cc's gate
// this many times more, and the gate picks which start (objcache/memory_gate.h). A waiting
// fabuild-cc holds about 4.5 MB. Simulated on FlashAttention's units at 13 GB, a window of 4
// compiles a row within 3 % of one holding every unit (381 against 372 min; 1: 469, 2: 390)
// (docs/performance.md, "The memory gate").
constexpr int kGateWindow = 4;
// What a gated cell's own processes hold beside its compiles (setup.py with torch imported,
// ninja, the compiles waiting at the gate): its container's cap is the grant and this.
constexpr double kGateOverheadMb = 1024;

// One cell's compile settings.
struct JobSettings {
  int max_jobs = 1;
  int nvcc_threads = 1;         // 0: not an nvcc build (ROCm: hipcc), NVCC_THREADS is not set
  double gb_per_job = 0;        // memory model: working nvcc threads x GB per thread
  std::optional<int> jobs_cap;  // the most MAX_JOBS the scheduler may grant (build.max_jobs, Windows' 1)
  // gb_per_job comes from the row's recorded peaks, and each compile starts when its own
  // recorded peak fits in the cell's grant (objcache/memory_gate.h: wrapper_env::kMemoryMb).
  bool memory_gate = false;
  std::vector<std::string> notes;  // why settings differ from what was asked
  [[nodiscard]] double peak_gb() const { return max_jobs * gb_per_job; }
};

// A cell's jobs before the scheduler sets MAX_JOBS: nvcc's --threads splits one compile
// over its -gencode targets, so only min(NVCC_THREADS, archs) threads work at once and each
// holds about memory_per_thread_gb. NVCC_THREADS is lowered to that, with a note. A ROCm cell
// compiles with hipcc, one thread a job: no NVCC_THREADS. A Windows cell (MSVC + nvcc, whose
// memory per job nobody has measured) runs at MAX_JOBS=1, as the Windows manual build does
// against out-of-memory, unless the matrix gives build.max_jobs or build.memory_per_thread_gb;
// its note says so.
JobSettings job_shape(const Cell& cell);

// The JOBS column: "4x2" (MAX_JOBS x NVCC_THREADS), "4" for a cell without nvcc.
std::string jobs_text(const JobSettings& jobs);

}  // namespace fabuild
