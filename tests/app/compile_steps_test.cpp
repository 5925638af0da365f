#include "app/compile_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/fake_clock.h"
#include "../support/fake_files.h"
#include "app/compile_follower.h"
#include "costs/row_costs.h"
#include "engine/facts.h"
#include "objcache/memory_gate.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A FlashAttention 2-shaped tree: kernels its setup.py builds, and .cu files it does not (layer
// norm, fused dense), as its sdist has them.
struct BuildUnitsTest : ::testing::Test {
  std::shared_ptr<test::FakeFiles> files = std::make_shared<test::FakeFiles>();
  const fs::path tree = "/s/src";
  CompileUnits u;

  BuildUnitsTest() {
    for (const char* f : {"csrc/flash_attn/src/flash_fwd_hdim64_bf16_sm80.cu",
                          "csrc/flash_attn/src/flash_bwd_hdim64_bf16_sm80.cu", "csrc/layer_norm/ln_fwd_256.cu",
                          "csrc/fused_dense_lib/fused_dense_cuda.cu", "csrc/flash_attn/flash_api.cpp"}) {
      files->add_file(tree / f, "//");
    }
    u.tree = tree;
    u.build_dir = tree;
    u.files = files;
    u.sources_file = "/s/.build-sources.json";
  }

  void sources(const nlohmann::json& j) { files->add_file(u.sources_file, j.dump()); }
};

TEST_F(BuildUnitsTest, TheUnitsAreWhatSetupPyBuildsNotTheTreesCuFiles) {
  sources({{"sources",
            {"/s/src/csrc/flash_attn/flash_api.cpp", "/s/src/csrc/flash_attn/src/flash_fwd_hdim64_bf16_sm80.cu",
             "/s/src/csrc/flash_attn/src/flash_bwd_hdim64_bf16_sm80.cu"}}});
  const BuildUnits units = build_units(u);
  EXPECT_THAT(units.kernels, ElementsAre("csrc/flash_attn/src/flash_bwd_hdim64_bf16_sm80.cu",
                                         "csrc/flash_attn/src/flash_fwd_hdim64_bf16_sm80.cu"));
  EXPECT_THAT(units.others, ElementsAre("csrc/flash_attn/flash_api.cpp"));
  EXPECT_THAT(units.from_tree, IsEmpty());
}

TEST_F(BuildUnitsTest, AHopperStyleSubdirectoryNamesUnitsFromTheTreesRoot) {
  u.build_dir = tree / "hopper";
  sources({{"sources",
            {"/s/src/hopper/instantiations/flash_fwd_hdim64_bf16_sm90.cu", "/s/src/hopper/flash_api.cpp",
             "/elsewhere/outside.cu"}}});
  const BuildUnits units = build_units(u);
  EXPECT_THAT(units.kernels, ElementsAre("hopper/instantiations/flash_fwd_hdim64_bf16_sm90.cu"));
  EXPECT_THAT(units.others, ElementsAre("hopper/flash_api.cpp"));
}

TEST_F(BuildUnitsTest, ASetupPyThatCouldNotBeReadFallsBackToTheTreeAndSaysWhy) {
  sources({{"error", "URLError: <urlopen error [Errno -2] Name or service not known>"}});
  const BuildUnits units = build_units(u);
  EXPECT_EQ(units.kernels.size(), 4u);  // every .cu of the tree: what the fallback can do
  EXPECT_THAT(units.from_tree, HasSubstr("setup.py could not be read for its sources: URLError"));

  sources({{"sources", nlohmann::json::array()}});
  EXPECT_THAT(build_units(u).from_tree, HasSubstr("setup.py named no extension sources"));

  files->add_file(u.sources_file, "not json");
  EXPECT_EQ(build_units(u).kernels.size(), 4u);
}

TEST_F(BuildUnitsTest, NoSourcesFileIsAMissingStepNotAnError) {
  const BuildUnits units = build_units(u);  // the step did not run (killed): the tree's files
  EXPECT_EQ(units.kernels.size(), 4u);
  EXPECT_THAT(units.from_tree, HasSubstr("the sources step left no list"));
}

// A row with no record of its own, planned by a torch sibling's (costs/borrowed.h): the units
// step splits, times and gates its kernels by that record, and says so.
TEST_F(BuildUnitsTest, ARowWithNoRecordGoesByTheRecordThePlanBorrowed) {
  sources({{"sources",
            {"/s/src/csrc/flash_attn/flash_api.cpp", "/s/src/csrc/flash_attn/src/flash_fwd_hdim64_bf16_sm80.cu",
             "/s/src/csrc/flash_attn/src/flash_bwd_hdim64_bf16_sm80.cu"}}});
  auto record = std::make_shared<RowCosts>();
  record->units["csrc/flash_attn/src/flash_fwd_hdim64_bf16_sm80.cu"] = UnitCost{50, 50, 2048};
  record->units["csrc/flash_attn/src/flash_bwd_hdim64_bf16_sm80.cu"] = UnitCost{90, 90, 4096};
  u.borrowed = record;
  u.borrowed_from = "2.11";
  u.costs = "/cache/costs/row.json";  // none of its own
  u.peaks_file = "/s/.objcache.peaks";
  u.compiles = std::make_shared<CellCompiles>(CacheTally{});
  auto follower = std::make_shared<CompileFollower>(
      FollowSettings{u.compiles, nullptr, "", "", "", std::chrono::milliseconds(20), nullptr, test::FakeClock().now()});
  const Step step = units_step(u, follower);
  CellRun run;
  run.log_path = "/s/log";
  Facts facts;
  StepContext ctx{run, facts, std::chrono::milliseconds(0)};
  ASSERT_TRUE(step.run_inline(ctx));
  follower->stop();
  const auto log = files->read("/s/log");
  ASSERT_TRUE(log);
  EXPECT_THAT(*log, HasSubstr("none recorded for this row yet: its kernels planned by torch 2.11's record"));
  EXPECT_THAT(*log, HasSubstr("memory gate: 2 kernels' recorded peaks, 2.0-4.0 GB"));
  const auto peaks = files->read(u.peaks_file);
  ASSERT_TRUE(peaks);
  const auto parsed = objcache::parse_unit_peaks(*peaks);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->of("/s/src/csrc/flash_attn/src/flash_bwd_hdim64_bf16_sm80.cu"), 4096U);

  // With a record of its own, the borrowed one is not read.
  RowCosts own;
  own.units["csrc/flash_attn/src/flash_fwd_hdim64_bf16_sm80.cu"] = UnitCost{10, 10, 1024};
  own.units["csrc/flash_attn/src/flash_bwd_hdim64_bf16_sm80.cu"] = UnitCost{10, 10, 1024};
  files->add_file(u.costs, to_json(own).dump());
  auto follower2 = std::make_shared<CompileFollower>(
      FollowSettings{u.compiles, nullptr, "", "", "", std::chrono::milliseconds(20), nullptr, test::FakeClock().now()});
  const Step again = units_step(u, follower2);
  ASSERT_TRUE(again.run_inline(ctx));
  follower2->stop();
  EXPECT_EQ(objcache::parse_unit_peaks(*files->read(u.peaks_file))
                ->of("/s/src/csrc/flash_attn/src/flash_bwd_hdim64_bf16_sm80.cu"),
            1024U);
}

}  // namespace
}  // namespace fabuild
