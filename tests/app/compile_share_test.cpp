// Compile shares' splits and recorded unit costs (costs/row_costs.h), and the progress a
// cell's compiles give the status line (app/compile_follower.h).

#include "costs/row_costs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "../support/fake_clock.h"
#include "../support/fake_files.h"
#include "../support/scratch_dir.h"
#include "app/compile_follower.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> units(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("csrc/k" + std::to_string(100 + i) + ".cu");
  return out;
}

TEST(SplitUnits, EveryUnitInOneShareBalancedByCost) {
  RowCosts costs;
  // 12 units, costs 12, 11, ..., 1 seconds.
  for (int i = 0; i < 12; ++i) costs.units["csrc/k" + std::to_string(100 + i) + ".cu"].cpu_s = 12 - i;
  const ShareSplitPlan plan = split_units(units(12), &costs, 3);
  EXPECT_TRUE(plan.measured);
  EXPECT_EQ(plan.recorded_units, 12U);
  ASSERT_EQ(plan.share_of.size(), 12U);
  ASSERT_EQ(plan.load.size(), 3U);
  // 78 seconds in all: longest first to the least loaded gives 26 each.
  for (double load : plan.load) EXPECT_DOUBLE_EQ(load, 26);
  // The same inputs, the same split: what every runner of the release computes.
  EXPECT_EQ(split_units(units(12), &costs, 3).share_of, plan.share_of);
}

// Without a record, the guess weighs each kind of kernel as FlashAttention's measured rows do:
// forward 1, split-KV forward 1.3, backward 1.4.
TEST(SplitUnits, WithoutARecordKernelsAreWeighedByTheirKind) {
  const std::vector<std::string> u = {"a_fwd.cu", "b_fwd.cu", "c_bwd.cu", "d_bwd.cu", "e_fwd_split.cu", "f_fwd.cu"};
  const ShareSplitPlan plan = split_units(u, nullptr, 2);
  EXPECT_FALSE(plan.measured);
  EXPECT_DOUBLE_EQ(plan.cost.at("e_fwd_split.cu"), 1.3);
  EXPECT_DOUBLE_EQ(plan.cost.at("c_bwd.cu"), 1.4);
  EXPECT_DOUBLE_EQ(plan.load[0] + plan.load[1], 7.1);
  EXPECT_NE(plan.share_of.at("c_bwd.cu"), plan.share_of.at("d_bwd.cu"));
  EXPECT_EQ(guessed_costs_said(false), "guessed (1 a forward kernel, 1.3 a split-KV one, 1.4 a backward one)");
}

// FlashAttention 2 with BACKWARD off still compiles its backward files, each in seconds: a
// guess of 2 made the first minutes' ETA say "~4 min left" of a 34-minute build.
TEST(SplitUnits, WithoutARecordAndBackwardOffBackwardKernelsCostAlmostNothing) {
  const std::vector<std::string> u = {"a_fwd.cu", "b_fwd.cu", "c_bwd.cu", "d_bwd.cu"};
  const ShareSplitPlan plan = split_units(u, nullptr, 1, /*backward_off=*/true);
  EXPECT_DOUBLE_EQ(plan.cost.at("a_fwd.cu"), 1);
  EXPECT_DOUBLE_EQ(plan.cost.at("c_bwd.cu"), 0.05);
  EXPECT_DOUBLE_EQ(plan.load[0], 2.1);
  // Both backward files done after a minute: 0.1 of the guessed 2.1, so ~20 more minutes.
  CompileClock c;
  c.done = 2;
  c.total = 4;
  c.done_cost = 0.1;
  c.total_cost = plan.load[0];
  c.elapsed_s = 60;
  EXPECT_EQ(compile_progress(c).text, "2/4 units, ~20 min left");
  EXPECT_THAT(guessed_costs_said(true), testing::HasSubstr("0.05 a backward one: the profile turns BACKWARD off"));
}

TEST(SplitUnits, AUnitTheRecordLacksCostsTheMeanOfThoseItHas) {
  RowCosts costs;
  costs.units["csrc/k100.cu"].cpu_s = 10;
  costs.units["csrc/k101.cu"].cpu_s = 30;
  costs.units["csrc/api.cpp"].cpu_s = 500;  // not a kernel: not in the mean
  const ShareSplitPlan plan = split_units(units(3), &costs, 2);
  EXPECT_EQ(plan.recorded_units, 2U);
  EXPECT_DOUBLE_EQ(plan.cost.at("csrc/k102.cu"), 20);
  EXPECT_DOUBLE_EQ(plan.load[0] + plan.load[1], 60);
}

TEST(RowCostsRecord, ReadsBackAndRefusesWhatIsNotOne) {
  RowCosts costs;
  costs.recorded = "2026-11-26T10:00:00Z on builder";
  costs.units["csrc/a.cu"] = UnitCost{170, 330, 4100};
  const auto back = row_costs_from_json(to_json(costs).dump());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->recorded, costs.recorded);
  EXPECT_DOUBLE_EQ(back->units.at("csrc/a.cu").cpu_s, 330);
  EXPECT_DOUBLE_EQ(back->kernel_peak_mb(1), 4100);
  EXPECT_FALSE(row_costs_from_json("{}"));
  EXPECT_FALSE(row_costs_from_json("not json"));
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {"a.cu": {"cpu_s": -1}}})"));
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {"a.cu": {"threads": 0}}})"));
}

// A record of a value of another type is no record (it is read from the remote: any runner's).
TEST(RowCostsRecord, AValueOfAnotherTypeIsNoRecord) {
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {"a.cu": {"cpu_s": "12"}}})"));
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {}, "setups": 3})"));
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {}, "setups": [{"seconds": "9", "recorded": "x"}]})"));
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {}, "setups": [{"seconds": 9}]})"));
}

// Each CI job's setup goes into the row's record: the latest kSetupsKept, by when they were
// recorded, each once however many records carry it; the plan times a job by the longest.
// The kernels the build compiles travel with the record (those without a cost yet too): another
// runner's list fills an empty one, never replaces one; a list of another type is no record.
TEST(RowCostsRecord, KeepsTheKernelsTheBuildCompiles) {
  RowCosts costs;
  costs.units["a.cu"] = UnitCost{1, 1, 100};
  costs.built = {"a.cu", "b.cu"};
  const auto back = row_costs_from_json(to_json(costs).dump());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->built, costs.built);
  RowCosts mine;
  add_theirs(mine, costs);
  EXPECT_EQ(mine.built, costs.built);
  RowCosts other;
  other.built = {"c.cu"};
  add_theirs(mine, other);
  EXPECT_EQ(mine.built, costs.built);
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {}, "built": "a.cu"})"));
  EXPECT_FALSE(row_costs_from_json(R"({"version": 1, "units": {}, "built": [3]})"));
  EXPECT_TRUE(row_costs_from_json(R"({"version": 1, "units": {}})")->built.empty());
}

TEST(RowCostsRecord, KeepsTheLatestSetupsAndTimesByTheLongest) {
  RowCosts costs;
  EXPECT_FALSE(costs.setup_s());
  EXPECT_TRUE(costs.empty());
  EXPECT_TRUE(costs.add_setup(SetupTime{700, "2026-11-26T03:00:00Z on runner-2"}));
  EXPECT_FALSE(costs.empty());  // a record of setups alone is a record
  EXPECT_FALSE(costs.add_setup(SetupTime{700, "2026-11-26T03:00:00Z on runner-2"}));
  for (int day = 10; day < 19; ++day) {
    costs.add_setup(SetupTime{600.0 + day, "2026-11-" + std::to_string(day) + "T03:00:00Z on runner-1"});
  }
  ASSERT_EQ(costs.setups.size(), kSetupsKept);
  EXPECT_EQ(costs.setups.front().recorded, "2026-11-12T03:00:00Z on runner-1");  // 10 and 11 went
  EXPECT_EQ(costs.setups.back().recorded, "2026-11-26T03:00:00Z on runner-2");
  EXPECT_DOUBLE_EQ(*costs.setup_s(), 700);
  const auto back = row_costs_from_json(to_json(costs).dump());
  ASSERT_TRUE(back);
  ASSERT_EQ(back->setups.size(), kSetupsKept);
  EXPECT_DOUBLE_EQ(back->setups.front().seconds, 612);
  // Another runner's record adds what this one lacks, units and setups, each once.
  RowCosts theirs;
  theirs.units["csrc/a.cu"] = UnitCost{1, 2, 3};
  theirs.add_setup(SetupTime{900, "2026-11-27T03:00:00Z on runner-3"});
  theirs.add_setup(costs.setups.back());
  const CostsAdded added = add_theirs(costs, theirs);
  EXPECT_EQ(added.units, 1U);
  EXPECT_EQ(added.setups, 1U);
  EXPECT_DOUBLE_EQ(*costs.setup_s(), 900);
  EXPECT_EQ(add_theirs(costs, theirs).setups, 0U);
}

// A kernel's peak grows with the nvcc stages run side by side: a record of 6600 MB at two
// threads is 13200 MB at four (measured: 6603 MB at one arch, 12851 at two threads, 25622 at
// four). A record from before the tree's peak (no "threads") held one stage's peak.
TEST(RowCostsRecord, AKernelsPeakScalesWithTheThreadsItIsCompiledAt) {
  RowCosts costs;
  costs.units["csrc/k.cu"] = UnitCost{200, 650, 6600, 2};
  costs.units["csrc/api.cpp"] = UnitCost{35, 35, 1600, 1};
  EXPECT_DOUBLE_EQ(costs.kernel_peak_mb(4), 13200);
  EXPECT_DOUBLE_EQ(costs.kernel_peak_mb(1), 3300);
  EXPECT_DOUBLE_EQ(peak_mb_at("csrc/api.cpp", costs.units.at("csrc/api.cpp"), 4), 1600);  // not a kernel
  const auto back = row_costs_from_json(to_json(costs).dump());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->units.at("csrc/k.cu").threads, 2);
  const auto old = row_costs_from_json(R"({"version": 1, "units": {"k.cu": {"cpu_s": 1, "peak_mb": 3300}}})");
  ASSERT_TRUE(old);
  EXPECT_DOUBLE_EQ(old->kernel_peak_mb(2), 6600);
}

TEST(RowCostsRecord, NamesEachCompileFromTheTreeAndKeepsTheLatest) {
  CacheTally tally;
  tally.costs.push_back({"/stage/cell/src/csrc/a.cu", 2000, 3500, 2048});
  tally.costs.push_back({"/elsewhere/b.cu", 1000, 1000, 1024});
  tally.costs.push_back({"/stage/cell/src/csrc/c.cu", 0, 0, 0});  // no measurement: an old wrapper's line
  RowCosts costs;
  costs.units["csrc/a.cu"].cpu_s = 1;
  EXPECT_EQ(record_compiles(costs, tally.costs, "/stage/cell/src", "now", 2), 2U);
  EXPECT_DOUBLE_EQ(costs.units.at("csrc/a.cu").cpu_s, 3.5);
  EXPECT_EQ(costs.units.at("csrc/a.cu").threads, 2);
  EXPECT_DOUBLE_EQ(costs.units.at("csrc/a.cu").peak_mb, 2);
  EXPECT_TRUE(costs.units.count("b.cu"));
  EXPECT_FALSE(costs.units.count("csrc/c.cu"));
  EXPECT_EQ(costs.recorded, "now");
}

TEST(KernelUnits, TheTreesCudaSourcesLessBundledLibrariesTestsAndExamples) {
  test::ScratchDir scratch("kernel-units");
  const fs::path t = scratch.path();
  for (const char* f : {"csrc/flash/k1.cu", "csrc/flash/k2.cu", "csrc/flash/api.cpp", "csrc/cutlass/x.cu", "tests/t.cu",
                        "examples/e.cu", "build/temp/g.cu", "hopper/instantiations/h.cu"}) {
    fs::create_directories((t / f).parent_path());
    std::ofstream(t / f) << "\n";
  }
  EXPECT_EQ(kernel_units(RealFiles(), t),
            (std::vector<std::string>{"csrc/flash/k1.cu", "csrc/flash/k2.cu", "hopper/instantiations/h.cu"}));
}

// The same through fake files (System::files): what the tree holds is all the walk sees.
TEST(KernelUnits, AreFoundThroughTheSystemsFiles) {
  test::FakeFiles files;
  for (const char* f : {"/src/csrc/flash/k1.cu", "/src/csrc/flash/api.cpp", "/src/third_party/y.cu",
                        "/src/benchmarks/b.cu", "/src/.git/z.cu", "/src/hopper/h_bwd.cu"}) {
    files.add_file(f);
  }
  EXPECT_EQ(kernel_units(files, "/src"), (std::vector<std::string>{"csrc/flash/k1.cu", "hopper/h_bwd.cu"}));
  EXPECT_TRUE(kernel_units(files, "/elsewhere").empty());
}

// The follower reads the tally as compiles append to it, whole lines only.
TEST(CompileFollowerTest, CountsTheExpectedUnitsAsTheirLinesArrive) {
  test::ScratchDir scratch("compile-follower");
  const std::string tally = (scratch.path() / "tally").string();
  CompileFollower follower(FollowSettings{std::make_shared<CellCompiles>(tally, std::make_shared<RealFiles>()), nullptr,
                                          "", "", "", std::chrono::milliseconds(20), nullptr, test::FakeClock().now()});
  follower.start({{"/src/a.cu", 1}, {"/src/b.cu", 3}});
  {
    std::ofstream out(tally, std::ios::app);
    out << "miss\t10\t/src/b.cu\twhy\tm\tr\t1\t2\t3\n"
        << "placeholder\t0\t/src/other.cu\tshare 2/2";  // half a line
  }
  for (int i = 0; i < 100 && follower.progress().text.rfind("1/2", 0) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  follower.stop();
  const CellProgress p = follower.progress();
  EXPECT_EQ(p.text.substr(0, 9), "1/2 units") << p.text;
  EXPECT_EQ(p.tenths, 7);  // 3 of 4 seconds
}

// The time left is the follower's clock's: 2 minutes for a quarter of the cost leaves 6.
TEST(CompileFollowerTest, TheTimeLeftIsReadFromItsClock) {
  test::ScratchDir scratch("compile-follower");
  const std::string tally = (scratch.path() / "tally").string();
  test::FakeClock clock;
  CompileFollower follower(FollowSettings{std::make_shared<CellCompiles>(tally, std::make_shared<RealFiles>()), nullptr,
                                          "", "", "", std::chrono::milliseconds(5), nullptr, clock.now()});
  follower.start({{"/src/a.cu", 3}, {"/src/b.cu", 1}});
  clock.advance(std::chrono::minutes(2));
  std::ofstream(tally, std::ios::app) << "miss\t10\t/src/b.cu\twhy\tm\tr\t1\t2\t3\n";
  for (int i = 0; i < 200 && follower.progress().text.rfind("1/2", 0) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  follower.stop();
  EXPECT_EQ(follower.progress().text, "1/2 units, ~6 min left");
}

// The follower notes when each compile it sees ended, for the time left knowing the slots: 11
// units of cost 1, 2 at once; two compiled (misses) by 2 minutes and one from the cache. The
// rate says 2 min x 8/3 = ~5 min; the slots say 8 units of 120 s on 2 slots, 8 min.
TEST(CompileFollowerTest, KnowingTheSlotsItReplaysTheRestOfTheBuild) {
  test::ScratchDir scratch("compile-follower");
  const std::string tally = (scratch.path() / "tally").string();
  test::FakeClock clock;
  CompileFollower follower(FollowSettings{std::make_shared<CellCompiles>(tally, std::make_shared<RealFiles>()), nullptr,
                                          "", "", "", std::chrono::milliseconds(5), nullptr, clock.now()});
  std::map<std::string, double> units;
  for (const char c : std::string("abcdefghijk")) units[fmt::format("/src/{}.cu", c)] = 1;
  follower.start(units);
  clock.advance(std::chrono::minutes(2));
  std::ofstream(tally, std::ios::app) << "miss\t10\t/src/b.cu\twhy\tm\tr\t1\t2\t3\n"
                                      << "miss\t10\t/src/d.cu\twhy\tm3\tr3\t1\t2\t3\n"
                                      << "hit\t10\t/src/c.cu\twhy\tm2\tr2\t1\t2\t3\n";
  for (int i = 0; i < 200 && follower.progress().text.rfind("3/11", 0) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  follower.stop();
  EXPECT_EQ(follower.progress().text, "3/11 units, ~5 min left");
  EXPECT_EQ(follower.progress(2).text, "3/11 units, ~8 min left");
}

// A cell going back to its build starts its tally again while the follower reads it: the new
// build's lines count from nothing (the follower once read past the end of the shorter tally).
TEST(CompileFollowerTest, ATallyStartedAgainIsFollowedFromItsStart) {
  test::ScratchDir scratch("compile-follower");
  const std::string tally = (scratch.path() / "tally").string();
  const auto compiles = std::make_shared<CellCompiles>(tally, std::make_shared<RealFiles>());
  CompileFollower follower(
      FollowSettings{compiles, nullptr, "", "", "", std::chrono::milliseconds(5), nullptr, test::FakeClock().now()});
  follower.start({{"/src/a.cu", 1}, {"/src/b.cu", 1}});
  const auto wait_for = [&](const std::string& text) {
    for (int i = 0; i < 200 && follower.progress().text.rfind(text, 0) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return follower.progress().text;
  };
  std::ofstream(tally, std::ios::app) << "hit\t10\t/src/a.cu\twhy\tm1\tr1\t1\t2\t3\n"
                                      << "hit\t10\t/src/b.cu\twhy\tm2\tr2\t1\t2\t3\n";
  EXPECT_EQ(wait_for("2/2").substr(0, 9), "2/2 units");
  compiles->restart();
  std::ofstream(tally, std::ios::app) << "miss\t10\t/src/a.cu\twhy\tm1\tr3\t1\t2\t3\n";
  EXPECT_EQ(wait_for("1/2").substr(0, 9), "1/2 units");
  follower.stop();
  EXPECT_EQ(compiles->after_build().objects.size(), 1u);
}

// The build that starts again may write more lines than the first did before the follower
// reads: its compiles' times still count from the start again, not from the first build's.
TEST(CompileFollowerTest, ATallyStartedAgainCountsItsTimeFromThenHoweverFarItGot) {
  test::ScratchDir scratch("compile-follower");
  const std::string tally = (scratch.path() / "tally").string();
  const auto compiles = std::make_shared<CellCompiles>(tally, std::make_shared<RealFiles>());
  test::FakeClock clock;
  CompileFollower follower(
      FollowSettings{compiles, nullptr, "", "", "", std::chrono::milliseconds(5), nullptr, clock.now()});
  follower.start({{"/src/a.cu", 1}, {"/src/b.cu", 1}, {"/src/c.cu", 1}, {"/src/d.cu", 1}});
  const auto wait_for = [&](const std::string& text) {
    for (int i = 0; i < 200 && follower.progress().text.rfind(text, 0) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return follower.progress().text;
  };
  clock.advance(std::chrono::minutes(10));
  std::ofstream(tally, std::ios::app) << "miss\t10\t/src/a.cu\twhy\tm1\tr1\t1\t2\t3\n"
                                      << "miss\t10\t/src/b.cu\twhy\tm2\tr2\t1\t2\t3\n";
  EXPECT_EQ(wait_for("2/4").substr(0, 9), "2/4 units");
  compiles->restart();
  std::ofstream(tally, std::ios::app) << "miss\t10\t/src/a.cu\twhy\tm1\tr3\t1\t2\t3\n"
                                      << "miss\t10\t/src/b.cu\twhy\tm2\tr4\t1\t2\t3\n"
                                      << "hit\t10\t/src/c.cu\twhy\tm3\tr5\t1\t2\t3\n";
  EXPECT_EQ(wait_for("3/4").substr(0, 9), "3/4 units");
  clock.advance(std::chrono::minutes(3));
  follower.stop();
  // 3 minutes for 3 of 4 units: a minute more (13 minutes would say ~4).
  EXPECT_EQ(follower.progress().text, "3/4 units, ~1 min left");
}

}  // namespace
}  // namespace fabuild
