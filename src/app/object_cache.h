#pragma once

// How fabuild's cells use the compiler object cache (docs/performance.md): fabuild-cc (carried
// inside fabuild and installed into its cache directory) goes in front of nvcc through
// PYTORCH_NVCC and of c++ through CXX, so that cells which differ only in their Python tag
// compile each kernel once; each cell's hits and misses reach its manifest entry and the run's
// summary, and the cache is trimmed to its size when the build ends.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/options.h"
#include "costs/row_costs.h"
#include "engine/runner.h"
#include "matrix/cell.h"
#include "provision/container.h"
#include "util/expected.h"
#include "util/files.h"

namespace fabuild {

constexpr std::uint64_t kDefaultCacheBytes = 20'000'000'000;  // ~ 30 rows of one arch of FlashAttention

struct ObjectCacheSettings {
  bool enabled = true;
  std::string dir;  // absolute
  std::uint64_t max_bytes = kDefaultCacheBytes;
  std::string off_because;  // why it is off ("--no-cache"), for the plan
};

// The matrix's `cache:` under the command line's --no-cache, --cache-dir and --cache-size.
// Throws a config error (exit 2) for a --cache-size that is not a size.
// `cache_root`: fabuild's cache directory, where the object cache lives by default.
ObjectCacheSettings object_cache_settings(const CacheSpec& spec, const Options& options, const std::string& matrix_dir,
                                          const std::filesystem::path& cache_root);

// fabuild-cc and its fabuild-c++ name, installed once per fabuild build into
// <fabuild cache>/bin/ (the same directory is mounted read-only into containers).
struct CcWrapper {
  std::string cc;
  std::string cxx;  // "" on Windows: fabuild-cc.exe stands in for nvcc only
  std::string bin_dir;
  bool windows = false;  // fabuild-cc.exe: PYTORCH_NVCC is a Windows command line
};
// Into <cache_root>/bin; a Failure when it cannot be written there.
Expected<CcWrapper> install_cc_wrapper(Files& files, const std::filesystem::path& cache_root);

// One cell's compiles through the cache.
struct CacheTally {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t uncacheable = 0;
  std::uint64_t errors = 0;
  std::uint64_t placeholders = 0;  // units of other compile shares (costs/row_costs.h), not compiled here
  std::uint64_t stored_bytes = 0;  // written to the cache by its misses
  std::uint64_t hit_bytes = 0;     // objects it took from the cache
  // "<outcome> <source>: <why>" for each compile that was not a hit, for the cell's log.
  std::vector<std::string> not_hits;
  // (manifest key, result key) of each hit and stored miss: what the remote tier sends.
  std::vector<std::pair<std::string, std::string>> objects;
  // What each real compile cost, as fabuild-cc measured it (source: absolute).
  using Cost = MeasuredCompile;  // costs/row_costs.h
  std::vector<Cost> costs;
  std::vector<std::string> sources;  // of every line, in order (progress: which units are done)
  std::uint64_t gated = 0;           // compiles under the memory gate (objcache/memory_gate.h)...
  std::uint64_t gate_wait_ms = 0;    // ...and how long they waited to start, together
  // How many times the cell went back to its build before the one this tallies
  // (CellCompiles::restart): a tally that starts again is told apart however far it got.
  std::uint64_t restarts = 0;
  [[nodiscard]] std::uint64_t compiles() const { return hits + misses + uncacheable + errors; }
  // For the manifest entry: {"hits": 16, "misses": 1, ...}.
  [[nodiscard]] std::map<std::string, std::uint64_t> as_map() const;
};

// A cell's compiles through the cache as fabuild-cc counts them: a line per compile, appended to
// a file in the cell's staging directory (so also inside its container). This is that file's one
// reader, made where the cell's steps are assembled and shared by them: while the build runs the
// compile follower reads what is new (`read_new`); once it has ended, the rest is read once and
// the whole kept (`after_build`), and the steps after the build (the remote push, filing) take
// that value. No other module knows the file.
class CellCompiles {
 public:
  // The tally file `file`, read through `files` (the System's).
  CellCompiles(std::string file, std::shared_ptr<const Files> files);
  // A cell whose compiles are known already: nothing is read (a test's).
  explicit CellCompiles(CacheTally known);
  CellCompiles(const CellCompiles&) = delete;
  CellCompiles& operator=(const CellCompiles&) = delete;

  // The whole lines fabuild-cc added since the last read, added to the tally; returns the tally
  // so far. Once after_build has been asked, reads nothing.
  CacheTally read_new();
  // The whole tally, the build having ended: what is left of the file is read the first time it
  // is asked for (an absent file is no compiles), then kept.
  const CacheTally& after_build();
  // The file step's: after_build's tally, now in the cell's manifest entry and so in the run's
  // OBJECT CACHE table (object_cache_report).
  const CacheTally& for_entry();
  // Whether the file step took it.
  [[nodiscard]] bool in_entry() const;
  // The cell builds again from scratch (app/probation_steps.h): what was read is forgotten, and
  // the tally is the lines fabuild-cc adds from now on.
  void restart();

 private:
  void read_more();  // mutex_ held

  mutable std::mutex mutex_;
  std::string file_;  // "" when known
  std::shared_ptr<const Files> files_;
  std::uint64_t offset_ = 0;
  std::string partial_;  // a line fabuild-cc is still writing
  CacheTally tally_;
  bool settled_ = false;
  bool in_entry_ = false;
};

// Sets the cell's compilers to the wrapper's: PYTORCH_NVCC and CXX, wrapper_env::kDir, and the tally
// file in its staging directory, whose reader it returns. The matrix's own PYTORCH_NVCC or CXX
// (in the cell's env) is left alone. For a container cell, `mounts` gets the cache (read-write,
// which the caller has made) and the wrapper (read-only) at their own paths. `python_env`: the cell's Python
// environment
// ("" when it has none of its own), which its compiles map out of __FILE__ as its staging
// directory (objcache/normal_form.h).
std::shared_ptr<CellCompiles> use_object_cache(CellRun& run, const ObjectCacheSettings& settings,
                                               const CcWrapper& wrapper, const std::string& cuda_home,
                                               const std::string& python_env, std::vector<Mount>* mounts,
                                               std::shared_ptr<const Files> files);

// A library cell's (CMake's) compiles go through the cache as its compiler launchers
// (`fabuild-cc <nvcc or c++> ...`): sets wrapper_env::kDir and the tally in the cell's environment.
struct CmakeLaunchers {
  std::vector<std::string> arguments;      // -D arguments of its configure step
  std::shared_ptr<CellCompiles> compiles;  // the tally's reader
};
CmakeLaunchers use_object_cache_for_cmake(CellRun& run, const ObjectCacheSettings& settings, const CcWrapper& wrapper,
                                          std::shared_ptr<const Files> files);

// Appends to a cell's log (through `files`, the System's) how many compiles came from the cache,
// and why each other did not.
void log_cache_tally(Files& files, const CacheTally& tally, const std::string& log_path);

// What the file steps of a run found, by cell id.
struct ObjectCacheReport {
  std::map<std::string, CacheTally> cells;
};
// From the cells' tallies, by cell id (site_build.h's SiteBuild::compiles), once their run has
// ended: each cell whose file step recorded its compiles.
ObjectCacheReport object_cache_report(const std::map<std::string, std::shared_ptr<CellCompiles>>& cells);

// Makes the other cells of a row wait for its first (runs[k] is of row rows[k], the plan's
// PlannedCell::row; "": none), so that they find its kernels in the cache instead of compiling
// them at the same time; the first gets the budget it would get alone meanwhile
// (engine/scheduler.h). The plan's forecast orders them alike (engine/forecast.h).
void first_of_each_row_first(std::vector<CellRun>& runs, const std::vector<std::string>& rows);

// Trims the cache to its size and prints, after the run's table, each built cell's hits and
// misses, the total and the cache's size.
void finish_object_cache(const ObjectCacheSettings& settings, const ObjectCacheReport& report, std::ostream& out);

// After a run: trims the other caches under `cache_root` (sources, downloads, toolkits,
// environments; util/entry_cache.h) and prints one line with each one's size.
void finish_entry_caches(const std::filesystem::path& cache_root, std::ostream& out);

}  // namespace fabuild
