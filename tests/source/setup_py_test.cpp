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

// Shaped as FlashAttention 2's stable port writes it (upstream d5f02eb0): the stable API from
// torch 2.10, and the stable ABI only with dropout disabled.
constexpr const char* kFa2StableSetupPy = R"PY(
SKIP_CUDA_BUILD = os.getenv("FLASH_ATTENTION_SKIP_CUDA_BUILD", "FALSE") == "TRUE"
if not SKIP_CUDA_BUILD and not IS_ROCM:
    TORCH_MAJOR = int(torch.__version__.split(".")[0])
    # The stable Tensor APIs require torch 2.10.
    use_stable_torch_api = (TORCH_MAJOR, TORCH_MINOR) >= (2, 10)
    feature_flags = ["-DUSE_CUDA"] if use_stable_torch_api else []
    if os.getenv("FLASH_ATTENTION_DISABLE_DROPOUT", "FALSE") == "TRUE":
        feature_flags.append("-DFLASHATTENTION_DISABLE_DROPOUT")
        if use_stable_torch_api:
            # Only the dropout-disabled build is fully ABI stable.
            feature_flags.append("-DTORCH_TARGET_VERSION=0x020a000000000000")
setup(
    options={"bdist_wheel": {"py_limited_api": "cp310"}} if ext_modules and not IS_ROCM else {},
)
)PY";

// FlashAttention 3 at HEAD: the stable API source and the define from a parsed torch release.
constexpr const char* kFa3StableSetupPy = R"PY(
    torch_version = parse(torch.__version__)
    target_version = parse("2.9.0.dev20250830")
    stable_args = []

    if torch_version >= target_version:
        flash_api_source = "flash_api_stable.cpp"
        stable_args = ["-DTORCH_TARGET_VERSION=0x0209000000000000"]  # torch 2.9.0
    else:
        flash_api_source = "flash_api.cpp"
setup(options={"bdist_wheel": {"py_limited_api": "cp310"}})
)PY";

// The bundled example: opt in through a variable of its own, abi3 only when stable.
constexpr const char* kExampleStableSetupPy = R"PY(
use_stable_torch_api = (TORCH_MAJOR, TORCH_MINOR) >= (2, 10)
STABLE_ABI = os.getenv("FLASH_EXAMPLE_STABLE_ABI", "FALSE") == "TRUE" and use_stable_torch_api
if not SKIP_CUDA_BUILD:
    if STABLE_ABI:
        feature_flags.append("-DTORCH_TARGET_VERSION=0x020a000000000000")
setup(
    options={"bdist_wheel": {"py_limited_api": "cp310"}} if STABLE_ABI else {},
)
)PY";

TEST(SetupPy, FlashAttention2sStablePortNeedsDropoutOffAndTorch210) {
  const SetupPyFacts facts = read_setup_py(kFa2StableSetupPy, "");
  ASSERT_TRUE(facts.stable.has_value());
  EXPECT_EQ(facts.stable->floor, "2.10");
  EXPECT_EQ(facts.stable->line, 12);
  EXPECT_EQ(facts.stable->from, "2.10");
  EXPECT_EQ(facts.stable->from_line, 6);
  ASSERT_EQ(facts.stable->needs.size(), 1U);  // SKIP_CUDA_BUILD is tested with `not`: no need
  EXPECT_EQ(facts.stable->needs[0].variable, "FLASH_ATTENTION_DISABLE_DROPOUT");
  EXPECT_EQ(facts.stable->needs[0].line, 8);
  EXPECT_FALSE(facts.stable->limited_api_with_stable_only);  // abi3 for every CUDA build
  EXPECT_EQ(facts.limited_api, "cp310");
}

TEST(SetupPy, FlashAttention3BuildsStablyFromTheTorchItParses) {
  const SetupPyFacts facts = read_setup_py(kFa3StableSetupPy, "");
  ASSERT_TRUE(facts.stable.has_value());
  EXPECT_EQ(facts.stable->floor, "2.9");
  EXPECT_EQ(facts.stable->from, "2.9.0.dev20250830");
  EXPECT_EQ(facts.stable->from_line, 3);
  EXPECT_TRUE(facts.stable->needs.empty());
  EXPECT_FALSE(facts.stable->limited_api_with_stable_only);
}

TEST(SetupPy, TheExampleOptsInAndIsAbi3OnlyWhenStable) {
  const SetupPyFacts facts = read_setup_py(kExampleStableSetupPy, "");
  ASSERT_TRUE(facts.stable.has_value());
  EXPECT_EQ(facts.stable->floor, "2.10");
  EXPECT_EQ(facts.stable->from, "2.10");
  ASSERT_EQ(facts.stable->needs.size(), 1U);
  EXPECT_EQ(facts.stable->needs[0].variable, "FLASH_EXAMPLE_STABLE_ABI");
  EXPECT_EQ(facts.stable->needs[0].line, 3);
  EXPECT_TRUE(facts.stable->limited_api_with_stable_only);
}

TEST(SetupPy, NoDefineOrAMalformedOneIsNoStableBuild) {
  EXPECT_FALSE(read_setup_py(kHopperSetupPy, "").stable.has_value());
  EXPECT_FALSE(read_setup_py("flags = ['-DTORCH_TARGET_VERSION=0x0209']\n", "").stable.has_value());
  EXPECT_FALSE(read_setup_py("# flags = ['-DTORCH_TARGET_VERSION=0x0209000000000000']\n", "").stable.has_value());
  const auto patch = read_setup_py("flags = ['-DTORCH_TARGET_VERSION=0x020b010000000000']\n", "").stable;
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ(patch->floor, "2.11.1");
  EXPECT_EQ(patch->from, "");
  EXPECT_TRUE(patch->needs.empty());
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
