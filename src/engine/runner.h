#pragma once

// Runs cells as processes under one budget: the scheduler picks what starts and with how many
// jobs, the supervisor runs and stops the processes, the status printer tells the person.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/cell_env.h"
#include "engine/outcome.h"
#include "engine/scheduler.h"
#include "engine/status.h"
#include "util/exit_code.h"
#include "util/expected.h"
#include "util/files.h"
#include "util/process.h"

namespace fabuild {

struct CellRun;

// What a step of a cell works with, beside the cell: the facts its earlier steps found out
// (facts.h), to read and to add to. Facts flow forward, step to step, and the cell's outcome
// carries them out of the run.
struct StepContext {
  const CellRun& cell;
  Facts& facts;
  std::chrono::milliseconds elapsed;  // the cell's time when this step started: its earlier steps'
};

// Ok, or a Failure: what went wrong (and what to do), the cell's FAILED line (Failure::message).
using StepResult = Expected<void>;

// One step of a cell: a process, or work done in fabuild itself (verifying a wheel).
// Steps run in order in the cell's share of the budget; the first that fails ends the cell.
struct Step {
  std::string name;               // "build", "verify": named in the log and in FAILED lines
  std::vector<std::string> argv;  // a process; arguments may hold {placeholders}
  std::string cwd;                // "" = fabuild's own
  EnvList env;                    // on top of the cell's
  // In-process work instead of a process. It runs on a worker thread while the loop goes on
  // with the other cells (reading their output, enforcing their time limits), so it touches
  // only its context and the cell's own files; it may append to the cell's log.
  std::function<StepResult(StepContext&)> run_inline;
  // A process whose output reports facts: each line "fabuild-fact: KEY=VALUE" it prints becomes
  // one (facts.h), read from its own output (the last MiB of it) when the step ends.
  bool reports_facts = false;
  // Started as it is even when the cell has a launcher (the step that starts its container).
  bool on_host = false;
  // argv is a template: {max_jobs}, {out}, {memory_mb}... are filled in when the step starts
  // (a command cell's command, the container's limits). Otherwise argv is passed as written:
  // a `python -c` script's f-strings and a path with braces stay intact.
  bool templated = false;
  // When this step ends well the cell gives its share of the budget back: what follows is
  // light (verifying, an import, filing: a core at most, for seconds) and the next cell may use
  // the cores meanwhile. Set on the compile; a cell that sets it on no step keeps its share.
  bool releases_share = false;
  // Started early, when the earlier step of this name starts, so that its slow start overlaps
  // that step: the import check loads torch while the compile runs. Until its turn comes it
  // must not touch what the steps between make: it waits for the file $FABUILD_GO names, which
  // the runner creates then. Its end counts when its turn comes; if the cell ends first, it is
  // killed. A process step, not one that reports facts. "": started in its turn.
  std::string starts_with{};
};

// A process as a step asks for it: argv (placeholders expanded), the variables it sets on
// top of what fabuild passes on (the cell's, MAX_JOBS..., the step's), and where it runs.
struct Launch {
  std::vector<std::string> argv;
  EnvList env;
  std::string cwd;
};

// What a cell leaves to undo when it ends (its container): a process on this machine, run by
// the loop like any other, in its own time limit; its output goes to the cell's log, and
// `judge` says whether its end is fine (a container already gone is).
struct Cleanup {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // its COMPLETE environment, as ProcessSpec::env
  std::chrono::milliseconds timeout{120000};
  std::function<StepResult(const ExitStatus& status, const std::string& output)> judge;
};

// A shared cache entry that a cell makes and that another fabuild may be making meanwhile (a
// Python environment). The cell runs its steps only once it holds the entry's make lock
// (util/entry_lock.h), waiting till then and saying once for whom. If the entry is `ready` by
// then, the holder before it made it: the cell ends well with no step run. A cell that ends any
// other way than well while holding it removes the entry: nothing half made stays to fill a disk
// or look made.
struct EntryClaim {
  std::string entry;  // the directory the cell makes
  std::string what;   // what the holder does, for those who wait: "making Python environment X for ..."
  std::function<bool()> ready;
};

// One cell as the engine runs it.
// What a run unit makes: a wheel or a library (a cell of the matrix), or what cells need made
// first: a Python environment, a CUDA toolkit from PyPI.
enum class RunKind { kCell, kEnvironment, kToolkit };

struct CellRun {
  std::string id;
  RunKind kind = RunKind::kCell;
  std::string subject;  // an environment's key, a toolkit's name ("cuda-13.2"); "" for a cell
  std::vector<Step> steps;
  // All but {max_jobs}, {nvcc_threads}, {out}, {memory_mb} (its share of the budget's memory)
  // and {cores} (of its cores), which are known when it starts.
  std::map<std::string, std::string> placeholders;
  // The build environment. MAX_JOBS (and CMAKE_BUILD_PARALLEL_LEVEL, its value for `cmake
  // --build`) and NVCC_THREADS are not in it: the runner sets them, from the share the scheduler
  // grants the cell when it starts.
  EnvList env;
  Demand demand;
  int nvcc_threads = 1;
  // Its compiles go through the memory gate: the runner tells them the grant's memory.
  bool memory_gate = false;
  std::chrono::milliseconds timeout{0};  // 0: none; for all its steps together
  std::chrono::milliseconds kill_grace{10000};
  std::string log_path;     // truncated when the cell starts
  std::string staging_dir;  // outputs are written here ({out}, $FABUILD_OUT_DIR)...
  std::string output_dir;   // ...and moved here if the cell succeeds
  // Where its processes run, when not here: turns each step's Launch into the process to start
  // on this machine (`docker exec` into the cell's container). Unset: as they are.
  std::function<Launch(const Launch&)> launch;
  // Runs once when the cell ends, whatever the outcome (ok, failed, timed out, cancelled),
  // before its staging directory is discarded: removing its container. What goes wrong is said
  // in the log and as a note; the outcome stands.
  std::optional<Cleanup> cleanup;
  std::optional<EntryClaim> claim;
  // While it runs, how far it is (its compiles), for the status line and, in a log, a line at
  // each tenth. Called on the loop's thread, about once a second, with the compiles it was
  // granted at once (its MAX_JOBS, or its memory gate's slots); unset: nothing to say.
  std::function<CellProgress(int slots)> progress;
  // The bytes it needs free on the disk it writes to (its output directory's, else its staging
  // directory's: sources, objects and a wheel, or a Python environment, estimated): less there
  // and it fails before its first step, saying so. 0: unchecked.
  std::uint64_t disk_need = 0;
  // Asked once, when a step fails (it exited non-zero or its in-process work failed; not a time
  // limit, a cancel or an interrupt), with the step's name, its FAILED message and the cell's
  // facts (to add to): the name of this or an earlier step to go back to, or "" to end the cell
  // as failed. Called on the loop's thread; it touches only the cell's own files and what it
  // holds, and says in the log what it did. A cell going back past the step that gave its share
  // back waits for a share again.
  std::function<std::string(const std::string& step, const std::string& message, Facts& facts)> retry;
};

struct RunSettings {
  // Outcomes' start and release times count from here (a build's two runs, its environments
  // and its cells, share one); unset: the start of this run.
  std::optional<std::chrono::steady_clock::time_point> origin;
  bool fail_fast = false;
  bool stream_output = false;  // -v: every line a cell prints
  Environment base_env;        // what every cell inherits, see inherited_env()
  // The CPUs this machine gives fabuild (System::machine: its affinity or cgroup, rounded up):
  // a container's --cpus never asks for more; 0: unknown, no cap.
  int machine_cores = 0;
  std::size_t tail_lines = 20;           // of a failed cell's log
  std::chrono::milliseconds tick{1000};  // status line refresh
};

struct RunReport {
  std::vector<CellOutcome> cells;  // in the order given
  int interrupt_signal = 0;        // SIGINT/SIGTERM/SIGHUP that stopped the run, or 0
  std::chrono::milliseconds elapsed{0};
  // 130/143/129 when interrupted, 1 if any cell did not succeed, else 0.
  [[nodiscard]] ExitCode exit_code() const;
};

// `files`: the staging directories, the filed outputs and the claimed entries a cell gave up
// (staging.h); the cells' logs are written directly.
RunReport run_cells(const std::vector<CellRun>& cells, const Budget& budget, const RunSettings& settings,
                    ProcessSupervisor& supervisor, Files& files, StatusPrinter& status);

}  // namespace fabuild
