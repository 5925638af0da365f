#pragma once

// In-process steps (verifying and unpacking a wheel: hashing and unzipping up to 300 MB), each on
// a thread of its own beside the runner's loop, which meanwhile goes on reading the other
// cells' output and enforcing their time limits. A worker shares nothing with the loop but the
// queue of what is done, and says it is done through the supervisor's wake().

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/facts.h"
#include "engine/runner.h"
#include "util/process.h"

namespace fabuild {

class InlineSteps {
 public:
  struct Done {
    std::size_t cell;
    StepResult result;
    Facts facts;  // the cell's, as the step left them
  };

  explicit InlineSteps(ProcessSupervisor& supervisor) : supervisor_(supervisor) {}
  ~InlineSteps();
  InlineSteps(const InlineSteps&) = delete;
  InlineSteps& operator=(const InlineSteps&) = delete;

  // Runs step.run_inline for cell `index` (at most one at a time per cell) on a copy of its facts.
  void start(std::size_t index, const CellRun& cell, const Step& step, Facts facts,
             std::chrono::steady_clock::time_point cell_started);

  // The steps that ended since the last call, their threads joined.
  std::vector<Done> collect();

  [[nodiscard]] bool empty() const { return threads_.empty(); }

 private:
  ProcessSupervisor& supervisor_;
  std::map<std::size_t, std::thread> threads_;  // by cell
  std::mutex mutex_;
  std::vector<Done> done_;  // guarded by mutex_: filled by workers
};

}  // namespace fabuild
