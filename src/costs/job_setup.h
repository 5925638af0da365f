#pragma once

// A CI job's setup, measured where it ends: from the job's start, which the workflow gives as
// FABUILD_JOB_STARTED (System::job_elapsed_s), to its first compile. It goes into the record of
// each row the job builds (costs/row_costs.h's RowCosts::setups) and from there into the next
// plan's job times (costs/ci_estimate.h), in place of the matrix's ci.setup_time guess. A job of
// several rows (a shard) has one setup: a later row's wait is the earlier rows' build time,
// which the plan counts as theirs.

#include <cstdint>
#include <functional>
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

  // A cell of the row starts compiling: the job's first such start ends its setup.
  void compile_starts(const std::string& row_key);
  // The job's setup for the row's record, once a row, for a row that compiled; none outside CI.
  std::optional<double> take(const std::string& row_key);

 private:
  std::function<std::optional<double>()> elapsed_s_;
  std::mutex mutex_;  // cells compile at once
  bool measured_ = false;
  std::optional<double> setup_s_;
  std::set<std::string> started_;
  std::set<std::string> taken_;
};

}  // namespace fabuild
