#include "app/source_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>

#include "../support/fake_clock.h"
#include "../support/fake_files.h"
#include "../support/scratch_dir.h"
#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;

// A FlashAttention 3 cell whose source is a git repository (read only once fetched).
Cell fa3_git_cell(const std::string& extra = "") {
  return expand(parse_matrix("package: flash-attn-3\nversions: [\"3.0.0\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\n"
                             "python: [cp312]\nsource: {git: \"https://example.invalid/fa.git\", ref: main}\n"
                             "torch_index: https://torch-index.invalid/whl\n" +
                                 extra,
                             "m.yaml"))
      .cells.at(0);
}

// A git source read only after it is fetched: its setup.py's floor against the plan's.
TEST(SourceSteps, AnAbi3SourceWhoseFloorIsNotThePlansFailsBeforeTheCompile) {
  test::ScratchDir dir("abi3-floor");
  const Cell cell = fa3_git_cell();
  EXPECT_TRUE(check_abi3_floor(cell, dir.path()).has_value());  // no setup.py: nothing to say
  std::ofstream(dir.path() / "setup.py") << "setup(options={\"bdist_wheel\": {\"py_limited_api\": \"cp310\"}})\n";
  EXPECT_TRUE(check_abi3_floor(cell, dir.path()).has_value());  // the preset's cp310
  std::ofstream(dir.path() / "setup.py") << "setup(options={\"bdist_wheel\": {\"py_limited_api\": \"cp312\"}})\n";
  const Expected<void> other = check_abi3_floor(cell, dir.path());
  ASSERT_FALSE(other.has_value());
  EXPECT_THAT(other.error().what,
              HasSubstr("setup.py builds cp312-abi3 wheels (py_limited_api), the plan expected cp310-abi3"));
  EXPECT_THAT(other.error().hint, HasSubstr("abi3: cp312"));
}

// A fetched source whose setup.py reads fewer switches than the preset knows (an older release):
// the ones it does not read are said; the floor still decides.
TEST(SourceSteps, SwitchesTheFetchedSourceDoesNotReadAreFound) {
  test::ScratchDir dir("unread-switches");
  const Cell cell = fa3_git_cell("profile: [minimal]\n");
  const std::vector<std::string> off = {"BACKWARD", "SPLIT", "HDIMDIFF64"};
  EXPECT_TRUE(unread_switches(cell, dir.path(), off).empty());  // no setup.py: nothing to say
  std::ofstream(dir.path() / "setup.py") << "A = os.getenv(\"FLASH_ATTENTION_DISABLE_BACKWARD\", \"FALSE\")\n"
                                            "B = os.getenv(\"FLASH_ATTENTION_DISABLE_SPLIT\", \"FALSE\")\n";
  EXPECT_THAT(unread_switches(cell, dir.path(), off), ::testing::ElementsAre("HDIMDIFF64"));
  EXPECT_TRUE(source_facts_step(cell, dir.path(), std::make_shared<RealFiles>()).has_value());
}

// A source directory is copied into the cell's own tree through the System's files (fake here):
// the whole tree, or a Failure naming both ends.
TEST(SourceSteps, ASourceDirectoryIsCopiedIntoTheCellsOwnTree) {
  const auto cells = std::make_shared<const std::vector<Cell>>(std::vector<Cell>{fa3_git_cell()});
  const PlannedCell p{cells, cells->at(0), {}, cells->at(0).id(), {}, {}};
  const SourceSpec spec{SourceSpec::Kind::kPath, "fa", "", "", {}};
  const auto copy_with = [&](const std::shared_ptr<test::FakeFiles>& files) {
    files->add_file("/src/fa/setup.py", "setup()");
    files->add_file("/src/fa/csrc/k.cu", "kernel");
    files->add_directory("/stage");
    CellRun run;
    std::vector<Mount> mounts;
    const auto findings = std::make_shared<CellFindings>(test::FakeClock().now());
    add_source_steps(
        run, SourceSteps{&p, &spec, "/m", nullptr, "/src/fa", "/stage", "/stage/src", false, findings, files}, mounts);
    const auto copy = std::find_if(run.steps.begin(), run.steps.end(), [](const Step& s) { return s.name == "copy"; });
    if (copy == run.steps.end()) return StepResult(fail("no copy step"));
    Facts facts;
    StepContext ctx{run, facts, {}};
    return copy->run_inline(ctx);
  };
  const auto files = std::make_shared<test::FakeFiles>();
  const StepResult copied = copy_with(files);
  ASSERT_TRUE(copied) << copied.error().what;
  EXPECT_EQ(files->file("/stage/src/csrc/k.cu"), "kernel");
  EXPECT_EQ(files->file("/stage/src/setup.py"), "setup()");

  const auto refusing = std::make_shared<test::FakeFiles>();
  refusing->fail_on(test::FileOp::kCopy, "/stage/src");
  const StepResult refused = copy_with(refusing);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().what, HasSubstr("cannot copy /src/fa to /stage/src: "));
  EXPECT_FALSE(refusing->exists("/stage/src"));
}

}  // namespace
}  // namespace fabuild
