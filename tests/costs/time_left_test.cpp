// The progress a cell's compiles give the status line and the time they have left
// (costs/time_left.h); the follower that gathers it is tested in tests/app/compile_share_test.cpp.

#include "costs/time_left.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "costs/model_json.h"

namespace fabuild {
namespace {

CompileClock clock_of(std::size_t done, std::size_t total, double done_cost, double total_cost, double elapsed_s) {
  CompileClock c;
  c.done = done;
  c.total = total;
  c.done_cost = done_cost;
  c.total_cost = total_cost;
  c.elapsed_s = elapsed_s;
  return c;
}

TEST(CompileProgress, SaysUnitsAndTimeLeftFromTheCostDone) {
  const CellProgress p = compile_progress(clock_of(3, 12, 25, 100, 600));
  EXPECT_EQ(p.text, "3/12 units, ~30 min left");
  EXPECT_EQ(p.tenths, 2);
  EXPECT_EQ(compile_progress(clock_of(12, 12, 100, 100, 60)).tenths, 10);
  EXPECT_EQ(compile_progress(clock_of(0, 12, 0, 100, 5)).text, "0/12 units");
  EXPECT_EQ(compile_progress(clock_of(4, 0, 0, 0, 5)).text, "4 units compiled");
  EXPECT_EQ(compile_progress(clock_of(4, 0, 0, 0, 5)).tenths, -1);
}

// 35 units of 100 s, 4 at once: the first 4 ended at 100 s and 4 more have run 60 s since.
// Counting only what finished says 160 s x 31/4 = ~21 min; knowing the 4 slots, the running ones
// end in 40 s and the 27 not started take 7 more rounds on 3 slots: 740 s, ~12 min, the time
// really left.
TEST(CompileProgress, KnowingTheSlotsItReplaysTheRestOfTheBuild) {
  CompileClock c = clock_of(4, 35, 4, 35, 160);
  EXPECT_EQ(compile_progress(c).text, "4/35 units, ~21 min left");
  c.slots = 4;
  c.compiled_ended_s = {100, 100, 100, 100};
  c.compiled_cost = 4;
  EXPECT_EQ(compile_progress(c).text, "4/35 units, ~12 min left");
  // Units from the cache took no slot time: 4 hits leave 23 not started, 6 more rounds.
  c.done = 8;
  c.done_cost = 8;
  EXPECT_EQ(compile_progress(c).text, "8/35 units, ~11 min left");
}

// The first compiles to end are the cheap ones: two of 10 and 20 s, while four have run 80-100 s.
// The finished ones alone say 15 s a unit; with the running ones, at least 400 s over 6 units,
// 67 s: the running ones end any moment (a tenth of a unit), the other 6 take two rounds on 4
// slots: 140 s, ~2 min, not "<1 min". With one unit compiled it says no time at all.
TEST(CompileProgress, ARunningCompileCostsAtLeastItsTimeSoFar) {
  CompileClock c = clock_of(2, 12, 2, 12, 100);
  c.slots = 4;
  c.compiled_ended_s = {10, 20};
  c.compiled_cost = 2;
  EXPECT_EQ(compile_progress(c).text, "2/12 units, ~2 min left");
  c = clock_of(1, 12, 1, 12, 100);
  c.slots = 4;
  c.compiled_ended_s = {10};
  c.compiled_cost = 1;
  EXPECT_EQ(compile_progress(c).text, "1/12 units");
  EXPECT_EQ(compile_progress(c).tenths, 0);
}

// `fabuild model`'s "progress" is the same function, for bench/eta_replay.py.
TEST(CompileProgress, TheModelAnswersWhatTheStatusLineSays) {
  const auto a = answer_model(nlohmann::json{{"op", "progress"},
                                             {"done", 4},
                                             {"total", 35},
                                             {"done_cost", 4},
                                             {"total_cost", 35},
                                             {"elapsed_s", 160},
                                             {"slots", 4},
                                             {"compiled_ended_s", {100, 100, 100, 100}},
                                             {"compiled_cost", 4}});
  ASSERT_TRUE(a) << a.error().what;
  EXPECT_EQ((*a)["text"], "4/35 units, ~12 min left");
  EXPECT_DOUBLE_EQ((*a)["left_s"].get<double>(), 740);
  EXPECT_EQ((*a)["tenths"], 1);
  const auto none = answer_model(nlohmann::json{
      {"op", "progress"}, {"done", 0}, {"total", 35}, {"done_cost", 0}, {"total_cost", 35}, {"elapsed_s", 10}});
  ASSERT_TRUE(none) << none.error().what;
  EXPECT_TRUE((*none)["left_s"].is_null());
  const auto bad = answer_model(nlohmann::json{{"op", "progress"}, {"done", -1}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().what.find("\"done\""), std::string::npos) << bad.error().what;
}

}  // namespace
}  // namespace fabuild
