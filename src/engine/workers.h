#pragma once

// Work done beside the runner's loop, one thread per cell at a time: in-process steps
// (verifying and unpacking a wheel: hashing and unzipping up to 300 MB) and a cell's wind-up
// (filing its outputs, removing its staging directory: gigabytes of sources and objects).
// Meanwhile the loop goes on reading the other cells' output and enforcing their time limits.
// A job shares nothing with the loop but what it writes before it ends, which the loop reads
// only after collect() has joined it; it says it is done through the supervisor's wake().
// A job starts no process: processes belong to the loop's supervisor, which alone handles
// Ctrl-C (util/signals.h).

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "util/process.h"

namespace fabuild {

class Workers {
 public:
  explicit Workers(ProcessSupervisor& supervisor) : supervisor_(supervisor) {}
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  // Runs `job` for cell `cell` (at most one job per cell at a time) on a thread of its own.
  void start(std::size_t cell, std::function<void()> job);

  // The cells whose job ended since the last call, their threads joined.
  std::vector<std::size_t> collect();

  [[nodiscard]] bool empty() const { return threads_.empty(); }

 private:
  ProcessSupervisor& supervisor_;
  std::map<std::size_t, std::thread> threads_;  // by cell
  std::mutex mutex_;
  std::vector<std::size_t> done_;  // guarded by mutex_: filled by the jobs
};

}  // namespace fabuild
