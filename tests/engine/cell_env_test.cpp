// The build environment each kind of cell gets (engine/cell_env.h): FlashAttention 2's
// contract, a profile's switches for FlashAttention 2 and 3, ROCm's BUILD_TARGET and GPU_ARCHS.

#include "engine/cell_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

using ::testing::Contains;
using ::testing::Not;
using ::testing::Pair;

EnvList env_of(const std::string& yaml, std::size_t index = 0) {
  const Expansion e = expand(parse_matrix(yaml, "m.yaml"));
  return cell_build_env(e.cells.at(index));
}

const std::string kFa2 =
    "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n";

TEST(CellEnv, FlashAttention2GetsItsContract) {
  const EnvList env = env_of(kFa2 + "archs: \"80;90\"\n");
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTENTION_FORCE_BUILD", "TRUE")));
  EXPECT_THAT(env, Contains(Pair("BUILD_TARGET", "cuda")));
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTN_CUDA_ARCHS", "80;90")));
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTN_LOCAL_VERSION", "cu128torch2.8cxx11abiTRUE")));
  // The runner sets these, from the share the scheduler grants (runner_test.cpp).
  EXPECT_THAT(env, Not(Contains(Pair("MAX_JOBS", ::testing::_))));
  EXPECT_THAT(env, Not(Contains(Pair("NVCC_APPEND_FLAGS", ::testing::_))));
}

// As FlashAttention publishes: the label in the file name only. Set empty, not left out, so
// that a FLASH_ATTN_LOCAL_VERSION of the caller's cannot reach METADATA.
TEST(CellEnv, UpstreamNamingBuildsThePlainVersion) {
  const EnvList env = env_of(kFa2 + "naming: upstream\n");
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTN_LOCAL_VERSION", "")));
}

TEST(CellEnv, AFlashAttention2ProfileDefinesItsSwitchesForBothCompilers) {
  const EnvList env = env_of(kFa2 +
                             "profile: fwd\nprofiles: {fwd: {disable: [BACKWARD, DROPOUT]}}\n"
                             "env: {NVCC_APPEND_FLAGS: \"-lineinfo\"}\n");
  EXPECT_THAT(env, Contains(Pair("NVCC_APPEND_FLAGS",
                                 "-lineinfo -DFLASHATTENTION_DISABLE_BACKWARD -DFLASHATTENTION_DISABLE_DROPOUT")));
  EXPECT_THAT(env, Contains(Pair("CPPFLAGS", "-DFLASHATTENTION_DISABLE_BACKWARD -DFLASHATTENTION_DISABLE_DROPOUT")));
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTN_LOCAL_VERSION", "cu128torch2.8cxx11abiTRUE.fwd")));
}

TEST(CellEnv, AFlashAttention3ProfileSetsItsVariablesAndArchsDecideSm80) {
  const std::string fa3 =
      "package: flash-attn-3\nversions: [\"3.0.0b1\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n"
      "source: {path: fa}\n";
  const EnvList minimal = env_of(fa3 + "profile: minimal\n");
  for (const char* off : {"BACKWARD", "SPLIT", "PAGEDKV", "APPENDKV", "SOFTCAP", "PACKGQA", "FP8", "HDIM96", "HDIM192",
                          "HDIM256", "SM80", "HDIMDIFF64", "HDIMDIFF192"}) {
    EXPECT_THAT(minimal, Contains(Pair(std::string("FLASH_ATTENTION_DISABLE_") + off, "TRUE"))) << off;
  }
  EXPECT_THAT(minimal, Not(Contains(Pair("FLASH_ATTN_CUDA_ARCHS", ::testing::_))));  // FA3 has no arch list
  EXPECT_THAT(minimal, Contains(Pair("FLASH_ATTN_LOCAL_VERSION", "cu128torch2.8cxx11abiTRUE.minimal")));
  // inference keeps split and paged KV.
  const EnvList inference = env_of(fa3 + "profile: inference\n");
  EXPECT_THAT(inference, Not(Contains(Pair("FLASH_ATTENTION_DISABLE_SPLIT", ::testing::_))));
  EXPECT_THAT(inference, Not(Contains(Pair("FLASH_ATTENTION_DISABLE_PAGEDKV", ::testing::_))));
  EXPECT_THAT(inference, Contains(Pair("FLASH_ATTENTION_DISABLE_BACKWARD", "TRUE")));
  // Without a profile the archs decide: its default (80 and 90) builds sm_80, "90" does not.
  EXPECT_THAT(env_of(fa3), Not(Contains(Pair("FLASH_ATTENTION_DISABLE_SM80", ::testing::_))));
  EXPECT_THAT(env_of(fa3 + "archs: \"90\"\n"), Contains(Pair("FLASH_ATTENTION_DISABLE_SM80", "TRUE")));
}

TEST(CellEnv, ARocmCellBuildsForRocmWithItsGpuArchs) {
  const EnvList env = env_of(
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\nrocm: [\"6.3\"]\npython: [cp312]\n"
      "rocm_archs: [gfx942]\n");
  EXPECT_THAT(env, Contains(Pair("BUILD_TARGET", "rocm")));
  EXPECT_THAT(env, Contains(Pair("GPU_ARCHS", "gfx942")));
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTN_LOCAL_VERSION", "rocm63torch2.8cxx11abiTRUE")));
  EXPECT_THAT(env, Not(Contains(Pair("FLASH_ATTN_CUDA_ARCHS", ::testing::_))));
}

// What a cell inherits from fabuild's own environment: the basics and the configuration of the
// tools a build runs (pip's, uv's, the container engine's), and nothing that would change the
// build behind the matrix's back.
// A win_amd64 cell (FlashAttention's manual Windows recipe, made reproducible): setuptools takes
// the captured MSVC environment as it is (DISTUTILS_USE_SDK=1); the C++11 ABI switch, a
// libstdc++ thing, is not set; the label is the one the community's Windows wheels carry.
TEST(CellEnv, AWindowsCellUsesTheSdkAndHasNoCxx11AbiSwitch) {
  const EnvList env = env_of(kFa2 + "platform: [win_amd64]\nprovision: host\narchs: \"80\"\n");
  EXPECT_THAT(env, Contains(Pair("DISTUTILS_USE_SDK", "1")));
  EXPECT_THAT(env, Contains(Pair("BUILD_TARGET", "cuda")));
  EXPECT_THAT(env, Contains(Pair("FLASH_ATTN_LOCAL_VERSION", "cu128torch2.8")));
  EXPECT_THAT(env, Not(Contains(Pair("FLASH_ATTENTION_FORCE_CXX11_ABI", ::testing::_))));
  EXPECT_THAT(env_of(kFa2), Not(Contains(Pair("DISTUTILS_USE_SDK", ::testing::_))));
}

// What a Windows process needs of fabuild's environment passes; names match without case there.
TEST(CellEnv, AWindowsHostPassesItsSystemVariables) {
  const Environment own{{"SystemRoot", "C:\\Windows"},
                        {"ComSpec", "C:\\Windows\\system32\\cmd.exe"},
                        {"TEMP", "C:\\Temp"},
                        {"ProgramFiles(x86)", "C:\\Program Files (x86)"},
                        {"LOCALAPPDATA", "C:\\Users\\u\\AppData\\Local"},
                        {"CUDA_PATH", "C:\\CUDA"}};
  EXPECT_THAT(
      inherited_env(own).entries(),
      ::testing::ElementsAre("SystemRoot=C:\\Windows", "ComSpec=C:\\Windows\\system32\\cmd.exe", "TEMP=C:\\Temp",
                             "ProgramFiles(x86)=C:\\Program Files (x86)", "LOCALAPPDATA=C:\\Users\\u\\AppData\\Local"));
}

TEST(CellEnv, InheritsTheBasicsAndTheToolsConfigurationOnly) {
  const char* environ_[] = {"PATH=/usr/bin",
                            "HOME=/home/u",
                            "PIP_INDEX_URL=https://mirror.invalid/simple",
                            "UV_CACHE_DIR=/cache/uv",
                            "LC_ALL=C.UTF-8",
                            "DOCKER_HOST=unix:///run/d.sock",
                            "SSL_CERT_FILE=/etc/ca.pem",
                            "CUDA_HOME=/opt/cuda",
                            "MAX_JOBS=64",
                            "LD_PRELOAD=/x.so",
                            "AWS_SECRET_ACCESS_KEY=s",
                            "UVICORN=1",
                            nullptr};
  EXPECT_THAT(inherited_env(Environment::parse(environ_)).entries(),
              ::testing::ElementsAre("PATH=/usr/bin", "HOME=/home/u", "PIP_INDEX_URL=https://mirror.invalid/simple",
                                     "UV_CACHE_DIR=/cache/uv", "LC_ALL=C.UTF-8", "DOCKER_HOST=unix:///run/d.sock",
                                     "SSL_CERT_FILE=/etc/ca.pem"));
}

}  // namespace
}  // namespace fabuild
