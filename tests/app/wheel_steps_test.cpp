// The steps after a package cell's compile (app/wheel_steps.h). The file step: what it records
// in the manifest from the filing's settings and the facts the earlier steps found, the wheel
// moved under the cell's directory, the object cache's tally in the entry and the log, and the
// wheel stamped verified. The verify and retag steps, through the System's files (fake ones, or
// this machine's with an operation failing): which wheel the build left, its name, what a
// failure leaves behind.

#include "app/wheel_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "../support/fake_clock.h"
#include "../support/fake_files.h"
#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "wheel/manifest.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
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
  test::FakeClock clock;
  const auto findings = std::make_shared<CellFindings>(clock.now());
  findings->exports = {{"mha_fwd", "yes"}};
  findings->needs = {{"glibc", "2.28"}};
  findings->mark_build_started();
  clock.advance(std::chrono::seconds(90));
  findings->wheel = staged;
  const Step step = file_step(filing, WheelChecks{}, findings, std::make_shared<RealFiles>());

  CellRun cell;
  cell.id = filing.id;
  cell.output_dir = (house / "fa2.8.3/torch2.8/cu128").string();
  cell.log_path = (dir.path() / "cell.log").string();
  Facts facts = {{kFactTorch, "2.8.0+cu128"}};
  StepContext ctx{cell, facts, {}};
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
  EXPECT_EQ(filed->build_seconds, 90.0) << "from when its source was in place";
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
  const Step step = file_step(filing, WheelChecks{}, std::make_shared<CellFindings>(test::FakeClock().now()),
                              std::make_shared<RealFiles>());
  CellRun cell;
  cell.output_dir = (dir.path() / "wh" / "x").string();
  cell.log_path = (dir.path() / "cell.log").string();
  Facts facts;
  StepContext ctx{cell, facts, {}};
  const StepResult done = step.run_inline(ctx);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().what, "no verified wheel to file");
  EXPECT_FALSE(find_filed(filing.wheelhouse, "cell"));
}

// What the verify step holds a cp312 cu128 wheel to, filed under the cell's spelling of its label.
WheelChecks cu128_checks(const fs::path& dist) {
  WheelChecks c;
  c.dist = dist;
  c.smoke = dist.parent_path() / "smoke";
  c.expected.dist_name = "flash_attn";
  c.expected.version = "2.8.3+cu128torch2.8cxx11abiTRUE";
  c.expected.python_tag = c.expected.abi_tag = "cp312";
  c.expected.platform_tag = "linux_x86_64";
  c.expected.required_members = {"flash_attn_2_cuda*.so"};
  c.expected.file_name = "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl";
  return c;
}

// The wheel setuptools leaves: the label lower-cased in its name and METADATA.
test::TestWheel as_built() {
  test::TestWheel w;
  w.version = w.metadata_version = "2.8.3+cu128torch2.8cxx11abitrue";
  return w;
}

// Runs the step of `run` named `name` on its own.
StepResult run_step(const CellRun& run, const std::string& name) {
  const auto step = std::find_if(run.steps.begin(), run.steps.end(), [&](const Step& s) { return s.name == name; });
  if (step == run.steps.end()) return fail("no step " + name);
  Facts facts;
  StepContext ctx{run, facts, {}};
  return step->run_inline(ctx);
}

TEST(WheelSteps, VerifyFailsWhenTheBuildLeftNoWheelOrMoreThanOne) {
  const auto files = std::make_shared<test::FakeFiles>();
  files->add_file("/stage/dist/build.log", "no wheel here");
  const auto findings = std::make_shared<CellFindings>(test::FakeClock().now());
  CellRun run;
  add_wheel_checks(run, cu128_checks("/stage/dist"), findings, files);
  StepResult verified = run_step(run, "verify");
  ASSERT_FALSE(verified);
  EXPECT_EQ(verified.error().what, "the build left no .whl in /stage/dist");

  files->add_file("/stage/dist/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl");
  files->add_file("/stage/dist/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl");
  verified = run_step(run, "verify");
  ASSERT_FALSE(verified);
  EXPECT_EQ(verified.error().what, "the build left 2 wheels in /stage/dist; expected one");
  EXPECT_TRUE(findings->wheel.empty());
  EXPECT_EQ(files->paths().size(), 5u) << "nothing renamed or removed: stage, dist and its three files";

  CellRun gone;  // a build that left no dist/ at all
  add_wheel_checks(gone, cu128_checks("/elsewhere/dist"), findings, files);
  EXPECT_EQ(run_step(gone, "verify").error().what, "the build left no .whl in /elsewhere/dist");
}

TEST(WheelSteps, AWheelThatFailsItsChecksKeepsItsNameAndIsNotFiled) {
  test::ScratchDir dir("wheel-steps-bad");
  const fs::path dist = dir.path() / "dist";
  fs::create_directories(dist);
  test::TestWheel bad = as_built();
  bad.tampered = {{"flash_attn/__init__.py", "not what RECORD hashed"}};
  const fs::path built = bad.write(dist);
  const auto files = std::make_shared<RealFiles>();
  const auto findings = std::make_shared<CellFindings>(test::FakeClock().now());
  CellRun run;
  const WheelChecks checks = cu128_checks(dist);
  add_wheel_checks(run, checks, findings, files);
  WheelFiling filing;
  filing.wheelhouse = dir.path() / "wh";
  filing.id = "cell";
  run.steps.push_back(file_step(filing, checks, findings, files));
  run.output_dir = (filing.wheelhouse / "x").string();
  run.log_path = (dir.path() / "cell.log").string();

  const StepResult verified = run_step(run, "verify");
  ASSERT_FALSE(verified);
  EXPECT_THAT(verified.error().what, HasSubstr("flash_attn/__init__.py"));
  EXPECT_THAT(files->list(dist).value(), ElementsAre(built)) << "not renamed to the cell's spelling";
  EXPECT_TRUE(findings->wheel.empty());
  EXPECT_FALSE(run_step(run, "file"));
  EXPECT_FALSE(find_filed(filing.wheelhouse, "cell"));
}

TEST(WheelSteps, AVerifiedWheelTakesTheCellsSpellingOfItsLabel) {
  test::ScratchDir dir("wheel-steps-name");
  const fs::path dist = dir.path() / "dist";
  fs::create_directories(dist);
  const fs::path built = as_built().write(dist);
  const auto findings = std::make_shared<CellFindings>(test::FakeClock().now());
  CellRun run;
  add_wheel_checks(run, cu128_checks(dist), findings, std::make_shared<RealFiles>());
  const StepResult verified = run_step(run, "verify");
  ASSERT_TRUE(verified) << verified.error().what;
  EXPECT_EQ(findings->wheel, dist / cu128_checks(dist).expected.file_name);
  EXPECT_TRUE(fs::exists(findings->wheel));
  EXPECT_FALSE(fs::exists(built));
}

TEST(WheelSteps, AWheelThatCannotBeRenamedFailsVerifyNamingIt) {
  test::ScratchDir dir("wheel-steps-rename");
  const fs::path dist = dir.path() / "dist";
  fs::create_directories(dist);
  const fs::path built = as_built().write(dist);
  const fs::path named = dist / cu128_checks(dist).expected.file_name;
  const auto files = std::make_shared<test::FailingFiles>();  // this machine's, but for the rename
  files->fail_on(test::FileOp::kRename, named);
  const auto findings = std::make_shared<CellFindings>(test::FakeClock().now());
  CellRun run;
  add_wheel_checks(run, cu128_checks(dist), findings, files);
  const StepResult verified = run_step(run, "verify");
  ASSERT_FALSE(verified);
  EXPECT_THAT(verified.error().what, HasSubstr("cannot rename " + built.string() + " to " + named.string() + ": "));
  EXPECT_TRUE(fs::exists(built));
  EXPECT_FALSE(fs::exists(named));
  EXPECT_TRUE(findings->wheel.empty()) << "no wheel handed on to unpack or file";
}

TEST(WheelSteps, ARetagWhoseDirectoryCannotBeMadeFailsNamingIt) {
  const auto files = std::make_shared<test::FakeFiles>();
  files->add_file("/stage/dist/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", "wheel");
  files->fail_on(test::FileOp::kCreateDirectories, "/stage/dist/retagged");
  WheelChecks checks = cu128_checks("/stage/dist");
  checks.expected.built_platform_tag = "linux_x86_64";
  checks.expected.platform_tag = "manylinux_2_28_x86_64";
  const auto findings = std::make_shared<CellFindings>(test::FakeClock().now());
  findings->wheel = "/stage/dist/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl";
  findings->needs = {{"glibc", "2.17"}};
  CellRun run;
  add_wheel_checks(run, checks, findings, files);
  const StepResult retagged = run_step(run, "retag");
  ASSERT_FALSE(retagged);
  EXPECT_THAT(retagged.error().what,
              HasSubstr("cannot retag the wheel: cannot create the directory /stage/dist/retagged"));
  EXPECT_FALSE(files->exists("/stage/dist/retagged"));
  EXPECT_EQ(findings->wheel, "/stage/dist/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl") << "the build's, unchanged";
}

}  // namespace
}  // namespace fabuild
