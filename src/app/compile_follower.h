#pragma once

// Follows a cell's compiles while its build runs: reads what is new of its tally as fabuild-cc
// appends to it (through the cell's CellCompiles, app/object_cache.h), sends each new object to the remote cache as
// soon as its compile ends — a CI job stopped by its time limit keeps what it compiled — and keeps how far the cell is,
// for the status line: "12/72 units, ~14 min left" (engine/outcome.h's CellProgress).

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

// What is known of a cell's compiles at one moment, for its progress and time left.
struct CompileClock {
  std::size_t done = 0;   // of the expected units, from the cache or compiled
  std::size_t total = 0;  // expected; 0: counts only
  double done_cost = 0, total_cost = 0;
  double elapsed_s = 0;                  // since the compiles began
  int slots = 0;                         // compiles at once; 0: unknown
  std::vector<double> compiled_ended_s;  // when each unit compiled here ended (not a hit), any order
  double compiled_cost = 0;              // those units' cost
};

// "12/72 units, ~14 min left". Knowing the slots, the time left is a replay of the build's rest
// (bench/eta_replay.py replays it on measured rows: docs/performance.md, "The time left on the
// progress line"): the compiles running started at the latest ends (the first `slots` at 0), so
// the slot-time spent on them is known and the rest of the slots' time went into the finished
// units, which gives the seconds a unit of cost takes (at least what the finished and running
// ones say together: a running one has cost at least its time so far). Each running compile
// takes a unit of the mean cost left, less what it spent; the units not started go to the slots
// as they free, as ninja hands them out; the time left is when the last ends. It says no time
// until max(2, slots/4) units are compiled. Without slots, the time so far times the cost left
// over the cost done (2-3 times too much while the first compiles run).
CellProgress compile_progress(const CompileClock& c);

}  // namespace fabuild
