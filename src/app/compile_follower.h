#pragma once

// Follows a cell's compiles while its build runs: reads what is new of its tally as fabuild-cc
// appends to it (through the cell's CellCompiles, app/object_cache.h), sends each new object to the remote cache as
// soon as its compile ends — a CI job stopped by its time limit keeps what it compiled — and keeps how far the cell is,
// for the status line: "12/72 units, ~14 min left" (costs/time_left.h).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/object_cache.h"
#include "costs/time_left.h"
#include "engine/outcome.h"
#include "remote/signing.h"
#include "remote/store.h"
#include "util/clock.h"

namespace fabuild {

struct FollowSettings {
  std::shared_ptr<CellCompiles> compiles;
  std::shared_ptr<remote::Store> remote;  // null: no pushing, progress only
  std::string cache_dir;                  // the local object cache
  std::string row_key;
  std::string writer;
  std::chrono::milliseconds period{2000};
  std::shared_ptr<const remote::IndexTrust> trust;  // the signing key for the index it sends
  SteadyNow clock;                                  // its elapsed time, for the ETA
};

class CompileFollower {
 public:
  explicit CompileFollower(FollowSettings settings);
  ~CompileFollower();
  CompileFollower(const CompileFollower&) = delete;
  CompileFollower& operator=(const CompileFollower&) = delete;

  // Starts following. `expected`: the units the build is expected to compile, by absolute
  // source path, with their expected cost (recorded CPU seconds, or a guess): the total and the
  // ETA; empty: counts only. Once running, does nothing.
  void start(std::map<std::string, double> expected = {});
  // Reads what is new of the tally once more, sends it, and stops. Idempotent.
  void stop();
  // `slots`: the compiles the cell runs at once (its MAX_JOBS grant, or its gate's slots); 0:
  // unknown, and the time left is the rate so far's alone.
  [[nodiscard]] CellProgress progress(int slots = 0) const;
  // How many units `start` was given: a share's own units.
  [[nodiscard]] std::size_t expected_units() const;
  [[nodiscard]] std::uint64_t pushed() const { return pushed_; }
  [[nodiscard]] std::uint64_t pushed_bytes() const { return pushed_bytes_; }
  // Notes from sending (a remote that failed): for the cell's log.
  [[nodiscard]] std::vector<std::string> notes() const;

 private:
  void loop();
  void read_more();

  FollowSettings s_;
  std::map<std::string, double> expected_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool remote_down_ = false;
  CacheTally seen_;       // what the last read found
  std::size_t sent_ = 0;  // of seen_.objects
  std::chrono::steady_clock::time_point started_{};
  // When each expected unit compiled here (not taken from the cache) was first seen done,
  // seconds after `started_`: the slots' estimate of the time left.
  std::map<std::string, double> ended_s_;
  std::atomic<std::uint64_t> pushed_{0};
  std::atomic<std::uint64_t> pushed_bytes_{0};
  std::vector<std::string> notes_;
};

}  // namespace fabuild
