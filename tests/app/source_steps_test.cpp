#include "app/source_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"
#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;

// A git source read only after it is fetched: its setup.py's floor against the plan's.
TEST(SourceSteps, AnAbi3SourceWhoseFloorIsNotThePlansFailsBeforeTheCompile) {
  test::ScratchDir dir("abi3-floor");
  const Cell cell =
      expand(parse_matrix("package: flash-attn-3\nversions: [\"3.0.0\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\n"
                          "python: [cp312]\nsource: {git: \"https://example.invalid/fa.git\", ref: main}\n"
                          "torch_index: https://torch-index.invalid/whl\n",
                          "m.yaml"))
          .cells.at(0);
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

}  // namespace
}  // namespace fabuild
