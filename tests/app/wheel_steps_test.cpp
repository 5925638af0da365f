// The file step of a package cell (app/wheel_steps.h): what it records in the manifest from
// the filing's settings and the facts the earlier steps found, the wheel moved under the cell's
// directory, the object cache's tally in the entry and the log, and the wheel stamped verified.

#include "app/wheel_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "wheel/manifest.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(WheelSteps, TheFileStepRecordsWhatTheCellsStepsFound) {
  test::ScratchDir dir("wheel-steps");
  const fs::path house = dir.path() / "wh";
  fs::create_directories(dir.path() / "dist");
  const fs::path staged = test::TestWheel{}.write(dir.path() / "dist");
  // The build's compiles as the object cache counted them, handed to the step: no file is read.
  CacheTally tally;
  tally.hits = 1;
  tally.hit_bytes = 1000;
  tally.misses = 1;
  tally.stored_bytes = 2000;
  tally.not_hits = {"miss /src/b.cu: no earlier compile"};

  WheelFiling filing;
  filing.wheelhouse = house;
  filing.id = "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64";
  filing.versions = {{"nvcc", "12.8"}, {"python", "3.12.1"}};
  filing.patches = {{"fix.patch", std::string(64, 'a')}};
  filing.compiles = std::make_shared<CellCompiles>(tally);
  const auto findings = std::make_shared<CellFindings>();
  findings->exports = {{"mha_fwd", "yes"}};
  findings->needs = {{"glibc", "2.28"}};
  findings->build_started = std::chrono::steady_clock::now() - std::chrono::seconds(90);
  findings->wheel = staged;
  const Step step = file_step(filing, WheelChecks{}, findings);

  CellRun cell;
  cell.id = filing.id;
  cell.output_dir = (house / "fa2.8.3/torch2.8/cu128").string();
  cell.log_path = (dir.path() / "cell.log").string();
  Facts facts = {{kFactTorch, "2.8.0+cu128"}};
  StepContext ctx{cell, facts, std::chrono::steady_clock::now()};
  const StepResult done = step.run_inline(ctx);
  ASSERT_TRUE(done) << done.error().what;

  EXPECT_FALSE(fs::exists(staged)) << "moved, not copied";
  const auto filed = find_filed(house, filing.id);
  ASSERT_TRUE(filed);
  EXPECT_EQ(filed->wheel, "fa2.8.3/torch2.8/cu128/" + staged.filename().string());
  EXPECT_TRUE(fs::exists(house / filed->wheel));
  EXPECT_THAT(filed->versions,
              UnorderedElementsAre(Pair("nvcc", "12.8"), Pair("python", "3.12.1"), Pair("torch", "2.8.0+cu128")));
  EXPECT_EQ(filed->patches, filing.patches);
  EXPECT_THAT(filed->exports, UnorderedElementsAre(Pair("mha_fwd", "yes")));
  EXPECT_THAT(filed->needs, UnorderedElementsAre(Pair("glibc", "2.28")));
  EXPECT_EQ(filed->object_cache.at("hits"), 1u);
  EXPECT_EQ(filed->object_cache.at("misses"), 1u);
  EXPECT_GE(filed->build_seconds, 90.0) << "from when its source was in place";
  EXPECT_LT(filed->build_seconds, 900.0);
  EXPECT_TRUE(filing.compiles->in_entry()) << "counted in the run's OBJECT CACHE table";
  EXPECT_EQ(filed->object_cache.at("stored_bytes"), 2000u);
  EXPECT_THAT(test::ScratchDir::read(cell.log_path), HasSubstr("object cache: 1 of 2 compiles from the cache"));
  EXPECT_THAT(test::ScratchDir::read(cell.log_path), HasSubstr("object cache: miss /src/b.cu: no earlier compile"));
  EXPECT_TRUE(fs::exists(house / ".verified.json")) << "stamped: a re-run need not verify it again";
}

TEST(WheelSteps, AFileStepWithoutAVerifiedWheelFailsTheCell) {
  test::ScratchDir dir("wheel-steps-none");
  WheelFiling filing;
  filing.wheelhouse = dir.path() / "wh";
  filing.id = "cell";
  const Step step = file_step(filing, WheelChecks{}, std::make_shared<CellFindings>());
  CellRun cell;
  cell.output_dir = (dir.path() / "wh" / "x").string();
  cell.log_path = (dir.path() / "cell.log").string();
  Facts facts;
  StepContext ctx{cell, facts, std::chrono::steady_clock::now()};
  const StepResult done = step.run_inline(ctx);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().what, "no verified wheel to file");
  EXPECT_FALSE(find_filed(filing.wheelhouse, "cell"));
}

}  // namespace
}  // namespace fabuild
