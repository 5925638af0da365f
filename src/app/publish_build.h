#pragma once

// What a build leaves besides wheels: the record of its run (report.json, summary.md), the
// pip indexes and the matrix page (src/publish), made at the end of every build and by
// `fabuild index` on their own.

#include <chrono>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/plan.h"
#include "engine/status.h"
#include "util/exit_code.h"
#include "util/files.h"

namespace fabuild {

// What build() knows at its end, for the record.
struct FinishedRun {
  std::string started;  // UTC, ISO 8601
  std::chrono::milliseconds elapsed{0};
  ExitCode exit_code = kExitOk;
  const std::vector<CellOutcome>* cells = nullptr;        // one per plan cell, in plan order
  const std::vector<CellOutcome>* preparation = nullptr;  // Python environments, if any were made
  std::map<std::string, double> gb_per_job;               // of each preparation run, by id
};

// Records the run, then writes the indexes and the page (src/publish); says where on `out`.
// `files` (System's) makes the wheelhouse and finds the cells' logs. A failure here does not
// hide the build's result: it is reported and the returned code is at least 1.
ExitCode publish_build(const Plan& plan, const FinishedRun& run, Files& files, std::ostream& out);

struct IndexOptions {
  std::string wheelhouse = "wheelhouse";
  std::string base_url;
  bool quiet = false;
  // --adopt: index a directory that is not a fabuild wheelhouse (no manifest.json), touching
  // only what fabuild writes; without it such a directory is refused and left as it was.
  bool adopt = false;
};

// Refuses (exit 2) a directory with no manifest.json unless --adopt: `fabuild index` on a
// directory of someone else's files (a pip mirror) would otherwise rewrite its pages. With
// --adopt, refuses one where fabuild would replace a file it did not write (refuse_adopting).
// Called before the wheelhouse's lock is taken, so that a refused directory gains no file either.
void check_indexable(const IndexOptions& options, const Files& files);

// `fabuild index [WHEELHOUSE]`: 0 when every wheel was published, 1 when some were left out
// (each named), 2 when the wheelhouse is not a directory.
ExitCode index_command(const IndexOptions& options, const Files& files, std::ostream& out);

}  // namespace fabuild
