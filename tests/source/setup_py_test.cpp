#include "source/setup_py.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;

// As FlashAttention 3's hopper/setup.py writes them (3.0.0).
constexpr const char* kHopperSetupPy = R"PY(
DISABLE_BACKWARD = os.getenv("FLASH_ATTENTION_DISABLE_BACKWARD", "FALSE") == "TRUE"
DISABLE_SPLIT = os.getenv("FLASH_ATTENTION_DISABLE_SPLIT", "FALSE") == "TRUE"
DISABLE_SM8x = os.getenv("FLASH_ATTENTION_DISABLE_SM80", "FALSE") == "TRUE"
DISABLE_HDIMDIFF64 = os.getenv("FLASH_ATTENTION_DISABLE_HDIMDIFF64", "FALSE") == "TRUE"
FORCE_BUILD = os.getenv("FLASH_ATTENTION_FORCE_BUILD", "FALSE") == "TRUE"
DISABLE_SPLIT_AGAIN = os.environ.get('FLASH_ATTENTION_DISABLE_SPLIT')
    target_version = parse("2.9.0.dev20250830")
setup(
    options={"bdist_wheel": {"py_limited_api": "cp310"}},
)
)PY";

TEST(SetupPy, ReadsTheLimitedApiFloorTheSwitchesAndTheStableAbiTorch) {
  const SetupPyFacts facts = read_setup_py(kHopperSetupPy, "FLASH_ATTENTION_DISABLE_");
  EXPECT_EQ(facts.limited_api, "cp310");
  EXPECT_THAT(facts.switches, ElementsAre("BACKWARD", "SPLIT", "SM80", "HDIMDIFF64"));  // FORCE_BUILD is no switch
  EXPECT_EQ(facts.stable_from, "2.9.0.dev20250830");
}

TEST(SetupPy, ASetupPyWithoutThemSaysNothing) {
  const SetupPyFacts facts = read_setup_py("from setuptools import setup\nsetup(name='x')\n", "X_DISABLE_");
  EXPECT_FALSE(facts.limited_api.has_value());
  EXPECT_TRUE(facts.switches.empty());
  EXPECT_FALSE(facts.stable_from.has_value());
  EXPECT_TRUE(read_setup_py(kHopperSetupPy, "").switches.empty());
}

TEST(SetupPy, FilesAreReadUpToASize) {
  test::ScratchDir dir("setup-py");
  std::ofstream(dir.path() / "setup.py") << kHopperSetupPy;
  const auto facts = read_setup_py_file(dir.path() / "setup.py", "FLASH_ATTENTION_DISABLE_");
  ASSERT_TRUE(facts.has_value());
  EXPECT_EQ(facts->limited_api, "cp310");
  EXPECT_FALSE(read_setup_py_file(dir.path() / "absent.py", "").has_value());
  {
    std::ofstream big(dir.path() / "big.py");
    big << std::string(2 * 1024 * 1024, '#');
  }
  EXPECT_FALSE(read_setup_py_file(dir.path() / "big.py", "").has_value());
}

}  // namespace
}  // namespace fabuild
