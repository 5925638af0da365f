#pragma once

// Runs cells as processes under one budget: the scheduler picks what starts and with how many
// jobs, the supervisor runs and stops the processes, the status printer tells the person.

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/cell_env.h"
#include "engine/outcome.h"
#include "engine/scheduler.h"
#include "engine/status.h"
#include "util/exit_code.h"
#include "util/process.h"

namespace fabuild {

struct CellRun;

// One step of a cell: a process, or quick work done in fabuild itself (verifying a wheel).
// Steps run in order in the cell's share of the budget; the first that fails ends the cell.
struct Step {
  std::string name;                 // "build", "verify": named in the log and in FAILED lines
  std::vector<std::string> argv;    // a process; arguments may hold {placeholders}
  std::string cwd;                  // "" = fabuild's own
  EnvList env;                      // on top of the cell's
  // In-process work instead of a process: returns "" or what went wrong. It may append to
  // the cell's log.
  std::function<std::string(const CellRun&)> run_inline;
};

// One cell as the engine runs it.
struct CellRun {
  std::string id;
  std::vector<Step> steps;
  std::map<std::string, std::string> placeholders; // all but {max_jobs}, {nvcc_threads}, {out}
  EnvList env;                                     // the build env, less MAX_JOBS and NVCC_THREADS
  Demand demand;
  int nvcc_threads = 1;
  std::chrono::milliseconds timeout{0};            // 0: none; for all its steps together
  std::chrono::milliseconds kill_grace{10000};
  std::string log_path;                            // truncated when the cell starts
  std::string staging_dir;                         // outputs are written here ({out}, $FABUILD_OUT_DIR)...
  std::string output_dir;                          // ...and moved here if the cell succeeds
};

struct RunSettings {
  bool fail_fast = false;
  bool stream_output = false;            // -v: every line a cell prints
  std::vector<std::string> base_env;     // what every cell inherits ("K=V"), see inherited_env()
  std::size_t tail_lines = 20;           // of a failed cell's log
  std::chrono::milliseconds tick{1000};  // status line refresh
};

struct RunReport {
  std::vector<CellOutcome> cells;        // in the order given
  int interrupt_signal = 0;              // SIGINT/SIGTERM/SIGHUP that stopped the run, or 0
  std::chrono::milliseconds elapsed{0};
  // 130/143/129 when interrupted, 1 if any cell did not succeed, else 0.
  [[nodiscard]] ExitCode exit_code() const;
};

RunReport run_cells(const std::vector<CellRun>& cells, const Budget& budget, const RunSettings& settings,
                    ProcessSupervisor& supervisor, StatusPrinter& status);

}  // namespace fabuild
