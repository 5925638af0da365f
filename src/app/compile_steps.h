#pragma once

// The steps around a cell's compile that follow its units (costs/row_costs.h,
// app/compile_follower.h): before it, which units it compiles and what each is expected to
// cost (a compile share's split written for fabuild-cc); during it, each object sent to the
// remote cache as its compile ends and the progress on the status line; after it, what each
// compile cost, recorded for the row (locally and beside its index on the remote). A compile
// share's cell ends with a `share` step that counts what it did, instead of a wheel.

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/compile_follower.h"
#include "costs/job_setup.h"
#include "engine/runner.h"
#include "matrix/select.h"
#include "remote/signing.h"
#include "remote/store.h"
#include "util/clock.h"
#include "util/files.h"

namespace fabuild {

inline constexpr const char* kFactShare = "compile_share";   // the share step: JSON object
inline constexpr const char* kFactJobSetup = "job_setup_s";  // the costs step: the CI job's setup, seconds

struct CompileUnits {
  std::shared_ptr<CellCompiles> compiles;  // the cell's tally (object_cache.h)
  std::filesystem::path tree;              // the cell's source tree, as its compiles name it
  std::filesystem::path build_dir;         // where its setup.py is (tree, or a subdirectory)
  std::shared_ptr<remote::Store> remote;   // null: no remote tier
  std::string cache_dir;                   // the local object cache
  std::filesystem::path costs;             // the row's local record (costs/row_costs.h's row_costs_path)
  std::string row_key;                     // remote_row_key
  std::string writer;                      // its name among the row's writers: a Python tag, or share<K>
  std::optional<Shard> share;              // --compile-share
  std::string share_file;                  // where the split goes (wrapper_env::kShare)
  std::string sources_file;                // the sources step's list of what the build compiles; "": none
  std::string share_costs;                 // --share-costs: "" latest, "none", or the record's SHA-256
  std::shared_ptr<Files> files;            // the System's: the tree's units, the records, the split, the log
  std::string peaks_file;                  // the memory gate's wrapper_env::kPeaks; "" = no gate (costs/unit_peaks.h)
  int nvcc_threads = 1;                    // the cell's NVCC_THREADS: its kernels' peaks are at this many
  std::shared_ptr<JobSetups> job_setups;   // the run's: the row's setup in this CI job, for its record
  bool remote_write = true;                // false: a read-only run reads the remote, sends nothing
  std::shared_ptr<const remote::IndexTrust> trust;  // signs what the follower sends (remote/signing.h)
  SteadyNow clock;                                  // the System's: the follower's elapsed time, for the ETA
  bool backward_off = false;  // the cell's profile turns BACKWARD off: no-record guesses (costs/row_costs.h)
  // The plan's record of the same kernels for torch `borrowed_from`, for a row with none of its
  // own (costs/borrowed.h): what its split, ETA and gate go by until it records its own.
  std::shared_ptr<const RowCosts> borrowed;
  std::string borrowed_from;
};

// What the build compiles, named from the tree's root as the row's record names them: the
// sources setup.py hands its extensions (the sources step's file, py/build_sources.py), or,
// where it could not be read that way, the kernel files under the setup.py directory
// (costs/row_costs.h's kernel_units; `from_tree` then says why). FlashAttention 2.8.3: 72 kernels
// and flash_api.cpp, where its sdist holds 129 .cu files outside cutlass.
struct BuildUnits {
  std::vector<std::string> kernels;  // .cu, sorted: split over compile shares
  std::vector<std::string> others;   // the API's .cpp files...: compiled by the finishing job
  std::string from_tree;             // "": from setup.py; else why the tree's files were counted
};
BuildUnits build_units(const CompileUnits& u);

// The follower for the cell, and its progress hook set on `run`.
std::shared_ptr<CompileFollower> follow_compiles(CellRun& run, const CompileUnits& u);
// Before the compile: the units and their costs, the share's split, the follower started.
Step units_step(const CompileUnits& u, std::shared_ptr<CompileFollower> follower);
// After it: the follower stopped, each compile's cost recorded.
Step costs_step(const CompileUnits& u, std::shared_ptr<CompileFollower> follower);
// A share cell's last step: what it compiled, left to other shares, took from the cache, sent.
Step share_step(const CompileUnits& u, std::shared_ptr<CompileFollower> follower);

// After the run's table: one line per compile share cell, what it did (its share step's fact).
void print_compile_shares(const std::vector<CellOutcome>& outcomes, std::ostream& out);

}  // namespace fabuild
