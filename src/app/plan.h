#pragma once

// The plan: every selected cell with what it will be built on, with which settings, and where
// its wheel will go. `--dry-run` prints it; the build runs it.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/object_cache.h"
#include "app/options.h"
#include "app/remote_cache.h"
#include "app/system.h"
#include "app/torch_window.h"
#include "costs/ci_estimate.h"
#include "costs/row_costs.h"
#include "engine/budget.h"
#include "engine/cell_env.h"
#include "matrix/expand.h"
#include "provision/msvc_env.h"
#include "provision/toolchain.h"
#include "provision/toolkit_choice.h"
#include "source/kernel_units.h"
#include "source/source.h"
#include "util/version.h"

namespace fabuild {

// A patch file a cell's source gets before its build (docs/packages.md, "Patches").
struct PatchFile {
  std::string name;    // as the matrix names it
  std::string path;    // absolute
  std::string sha256;  // of its content, when the plan was made
};

// What a planned cell is derived from is kept; what is derived from it (its label, build
// environment, wheel path, toolchain and source) is made when asked: a plan of 100 000 cells
// would spend most of its time and memory making those, where a run needs them only for the
// cells it builds and a dry run only for the cells it prints.
struct PlannedCell {
  // The plan's cells stay in the one array the matrix expanded into, which a copy of each
  // would double; `cell` is this one's there, and `cells` keeps the array alive with it.
  std::shared_ptr<const std::vector<Cell>> cells;
  const Cell& cell;
  std::vector<PatchFile> patches;
  std::string id;
  JobSettings jobs;
  // Its compile row (object_cache.h's compile_row) when the object cache orders the row, its
  // other tags after its first; "" for none. The plan's forecast and the run both order by it.
  std::string row;

  [[nodiscard]] std::string label() const;  // local_label: cu128torch2.8cxx11abiTRUE
  [[nodiscard]] EnvList env() const;        // cell_build_env: without MAX_JOBS (`jobs` forecasts it)
};

// A row's plan by the record of its nearest torch sibling (costs/borrowed.h): it has none yet.
struct BorrowedCosts {
  Version torch;  // the series whose record it is
  RowCosts record;
};

struct Plan {
  std::string matrix_file;
  std::vector<std::string> sets;  // the --set flags that replaced axes of it ("--set torch=2.12")
  // "matrix.yaml", or "matrix.yaml --set torch=2.12": the matrix as this run reads it.
  [[nodiscard]] std::string matrix_as_read() const {
    std::string text = matrix_file;
    for (const auto& s : sets) text += " " + s;
    return text;
  }
  std::string package;
  std::string wheelhouse;
  std::size_t matrix_cells = 0;  // buildable cells in the whole matrix, before filters
  std::optional<Shard> shard;
  // --compile-share: the one cell (its row's first) compiles this share of the row's kernel
  // units for the remote cache and files nothing (costs/row_costs.h).
  std::optional<Shard> compile_share;
  std::string share_costs;  // --share-costs: "" the row's latest record, "none", or its SHA-256
  // The matrix's torch series (resolved): whose records a row not yet built may plan by; and,
  // by remote_row_key, the rows that do (their compiles split, gated and timed by it).
  std::vector<Version> torch_series;
  std::map<std::string, BorrowedCosts> borrowed;
  // The rows' records as the plan read them for the gate (app/recorded_costs.h's ci_costs, every
  // row of `cells`); absent when no cell could be gated and none was read.
  std::optional<CiCosts> recorded;
  Budget budget;
  // The CPUs this machine gives fabuild (its affinity or cgroup, rounded up), read once with the
  // budget: a container's --cpus never asks for more (RunSettings::machine_cores).
  int machine_cores = 0;
  std::size_t at_once = 0;  // cells the scheduler starts together at the beginning
  std::vector<PlannedCell> cells;
  std::vector<DroppedCell> dropped;  // those the filters pick
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // e.g. which Python tags an abi3 cell's wheel serves
  // How cells without a command are built: the matrix's source, or a cell's own (an include's).
  SourceSpec source;
  [[nodiscard]] const SourceSpec& source_of(const Cell& cell) const { return cell.source() ? *cell.source() : source; }
  std::string torch_index;  // a URL, or an absolute directory of wheels (pip --find-links, no index)
  ContainerSpec container;  // how container cells run
  CiSpec ci;                // how --ci-matrix lays the cells out as CI jobs
  Frontend frontend = Frontend::kSetupPy;
  PythonEnvTool python_env = PythonEnvTool::kAuto;  // what makes host cells' environments
  std::string matrix_dir;                           // relative paths in the matrix (source.path) are from here
  ObjectCacheSettings cache;                        // the compiler object cache (docs/performance.md)
  RemoteCacheSettings remote_cache;                 // and its remote tier (app/remote_cache.h)
  // fabuild's cache (System::cache_dir): environments, toolkits, sources, the object cache.
  std::filesystem::path cache_root;
  // Where the machine's toolchain files are (toolchains_dir_for): "" when there is none.
  std::filesystem::path toolchains_dir;
  // <toolchains>/containers.yaml, read when some cell runs in a container.
  std::map<std::string, std::vector<std::string>> container_images;
  // Where host CUDA cells' toolkits come from, by toolkit_key(), once resolve_toolkits() has
  // looked (--dry-run shows it; a build decides the same way for the cells it builds).
  std::map<std::string, ToolkitChoice> toolkits;
  [[nodiscard]] const ToolkitChoice* toolkit_choice(const Cell& cell) const;
  // Host cells' interpreters by Python tag ("cp313t"), once resolve_pythons() has looked: the
  // path, or a Failure saying what was tried and what to do (--dry-run shows it; a build looks
  // the same way).
  std::map<std::string, Expected<std::string>> pythons;
  // The Visual Studio environment of a Windows host's win_amd64 cells, by CUDA set ("12.8"),
  // once resolve_msvc() has captured it (app/msvc_capture.h; --dry-run shows it).
  std::map<std::string, Expected<MsvcEnvironment>> msvc;
  // What each cell from a source directory compiles (a FlashAttention 3 wheel cell's units, a
  // library cell's), by cell id, once count_units() has read the sources (--list and --dry-run
  // show it).
  std::map<std::string, KernelUnits> units;
  // What the torch index has (app/torch_window.h): the matrix's ranges resolved, and by cell id
  // the torch releases each stable-ABI cell's wheel is verified under (docs/stable-abi.md).
  TorchResolution torch;
  std::map<std::string, std::vector<TorchRelease>> sweeps;
  // --verify-torch: the filed wheels are checked under `sweeps`' releases, nothing is built.
  bool verify_only = false;
  // By stable-ABI cell id, for a wheel the wheelhouse has filed: the series of its sweep that its
  // proofs lack (app/torch_plan.h); empty when it has them all.
  std::map<std::string, std::vector<std::string>> pending_checks;

  // What the cell files: wheelhouse/fa2.8.3/torch2.8/cu128/flash_attn-...whl, or a library cell's
  // archive, wheelhouse/fa3.0.0/lib/cu130/minimal/flash_attn_3-...tar.gz.
  [[nodiscard]] std::string filed_path(const PlannedCell& p) const;
  // What the cell is built on: the matrix's container settings, else the built-in images.
  [[nodiscard]] ToolchainPlan toolchain(const PlannedCell& p) const;
  [[nodiscard]] SourcePlan source_plan(const PlannedCell& p) const;
};

// Loads, expands, filters, shards and settles. UserError on bad input.
Plan make_plan(const Options& options, const System& system);

// The directory of toolchain files (host.yaml, containers.yaml; toolchains/README.md) for a
// matrix: $FABUILD_TOOLCHAINS when set, else the first `toolchains/` in the matrix file's
// directory or one above it (as git finds .git), never the working directory. "" when none.
std::filesystem::path toolchains_dir_for(const std::string& matrix_file, const Environment& env, const Files& files);
// <toolchains>/host.yaml, or "" when there is no toolchains directory (no file is read).
std::string host_toolchains_file(const Plan& plan);

// Which toolkit a host CUDA cell needs: its toolkit version and `toolkit:` source, "13.2|auto";
// "" for cells that bring their own (containers, ROCm, command cells).
std::string toolkit_key(const Cell& cell);
// Decides, for each toolkit_key of the plan's cells, where its toolkit comes from (`root`:
// where PyPI toolkits live).
void resolve_toolkits(Plan& plan, HostProbe& probe, const std::filesystem::path& root);
// Looks for each host cell's interpreter on this host, as the build will (a free-threaded 3.13t
// is found only as one), into plan.pythons.
void resolve_pythons(Plan& plan, HostProbe& probe);

// Fills plan.units from the cells' source directories, reading each directory once per kind,
// switches and archs (source/kernel_units.h); cells from a git or sdist source are not counted.
void count_units(Plan& plan);

}  // namespace fabuild
