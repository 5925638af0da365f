#pragma once

// How far a cell's compiles are and the time they have left, from what its compile follower
// (app/compile_follower.h) has seen: the status line's "12/72 units, ~14 min left" and the
// log's line at each tenth.

#include <cstddef>
#include <optional>
#include <vector>

#include "engine/outcome.h"

namespace fabuild {

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
// (bench/eta_replay.py replays it on measured rows through `fabuild model`'s "progress":
// docs/performance.md, "The time left on the progress line"): the compiles running started at the latest ends (the
// first `slots` at 0), so the slot-time spent on them is known and the rest of the slots' time went into the finished
// units, which gives the seconds a unit of cost takes (at least what the finished and running
// ones say together: a running one has cost at least its time so far). Each running compile
// takes a unit of the mean cost left, less what it spent; the units not started go to the slots
// as they free, as ninja hands them out; the time left is when the last ends. It says no time
// until max(2, slots/4) units are compiled. Without slots, the time so far times the cost left
// over the cost done (2-3 times too much while the first compiles run).
// The seconds left, as compile_progress says them; none where it says no time.
std::optional<double> time_left_s(const CompileClock& c);
CellProgress compile_progress(const CompileClock& c);

}  // namespace fabuild
