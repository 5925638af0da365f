#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "engine/facts.h"
#include "util/process.h"

namespace fabuild {

enum class CellResult { kOk, kFailed, kTimedOut, kCancelled, kNotRun, kUpToDate };
// "ok", "FAILED", "TIMEOUT", "cancelled", "not run", "up to date"
std::string to_string(CellResult r);

// How one cell of a run ended.
struct CellOutcome {
  std::string id;
  CellResult result = CellResult::kNotRun;
  ExitStatus status;    // of its last process, when it ran
  std::string step;     // the step that failed, if one did
  std::string message;  // what an in-process step found wrong
  std::chrono::milliseconds elapsed{0};
  int max_jobs = 0;
  int nvcc_threads = 0;
  std::string log_path;
  std::string output_dir;          // where its outputs were filed (ok only)
  std::vector<std::string> filed;  // file names filed there
  // When it started and when it gave its share of the budget back (after its compile: what is
  // left is light), counted from the run's origin; unset: it did not start, or kept its share.
  std::optional<std::chrono::milliseconds> started_at;
  std::optional<std::chrono::milliseconds> released_at;
  Facts facts;  // what its steps found out (facts.h)
};

struct Progress {
  std::size_t total = 0;
  std::size_t done = 0;  // ended, whatever the outcome
  std::size_t running = 0;
  std::size_t failed = 0;  // failed or timed out
};

// How far one running cell's work is, as the cell itself can tell (its compiles): "12/72 units,
// ~14 min left". `tenths`: how many tenths of it are done (0-10), -1 when unknown.
struct CellProgress {
  std::string text;
  int tenths = -1;
};

// "0:07", "4:31", "1:02:03".
std::string clock_time(std::chrono::milliseconds elapsed);

// "build: exit 1", "verify: METADATA version 2.8.3 differs from ...", "exit 3".
std::string what_happened(const CellOutcome& cell);

}  // namespace fabuild
