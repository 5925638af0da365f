#pragma once

// A CI job's setup, measured where it ends: from the job's start, which the workflow gives as
// FABUILD_JOB_STARTED (System::job_elapsed_s), to the first compile of each row the job builds.
// It goes into the row's record (app/compile_share.h's RowCosts::setups) and from there into
// the next plan's job times (app/ci_shares.h), in place of the matrix's ci.setup_time guess.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "util/expected.h"

namespace fabuild {

// FABUILD_JOB_STARTED's value read at `now` (both seconds since 1970): the seconds since the job
// started. A Failure for a value that is not such a time, or one after `now` or over a week
// before it (a variable left over from elsewhere).
Expected<double> job_elapsed_since(const std::string& started, std::int64_t now);

class JobSetups {
 public:
  // `elapsed_s`: the seconds since the job started, none outside a CI job.
  explicit JobSetups(std::function<std::optional<double>()> elapsed_s) : elapsed_s_(std::move(elapsed_s)) {}

  // A cell of the row starts compiling: the row's setup is the job's time till its first.
  void compile_starts(const std::string& row_key);
  // The row's setup, once: for its first cell's record; none outside CI or when taken.
  std::optional<double> take(const std::string& row_key);

 private:
  std::function<std::optional<double>()> elapsed_s_;
  std::mutex mutex_;  // a row's cells may compile at once
  std::map<std::string, std::optional<double>> started_;
  std::set<std::string> taken_;
};

}  // namespace fabuild
