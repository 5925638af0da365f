// The plan of a matrix that mixes FlashAttention 2 on CUDA and ROCm with a FlashAttention 3
// minimal cell and patches, through the real binary (docs/packages.md).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../support/scratch_dir.h"
#include "run_binary.h"

namespace fabuild {
namespace {

using test::run_fabuild;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PackagesCli, AMixedMatrixPlansDistinctIdsLabelsPathsAndEnvironments) {
  test::ScratchDir dir("packages-cli");
  std::ofstream(dir.path() / "fix.patch") << "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
  std::ofstream(dir.path() / "m.yaml")
      << "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\nrocm: [\"6.3\"]\n"
         "python: [cp311, cp312]\narchs: \"90\"\nprovision: host\npatches: {\"2.8.3\": [fix.patch]}\n"
         "include:\n  - {package: flash-attn-3, version: \"3.0.0b1\", cuda: \"12.8\", profile: minimal,\n"
         "     source: {git: \"https://example.invalid/fa.git\", ref: v2.8.3}}\n";
  const auto r = run_fabuild({(dir.path() / "m.yaml").string(), "--dry-run", "--format", "json", "-o",
                              (dir.path() / "wh").string(), "--cores", "16", "--memory-gb", "128"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto plan = nlohmann::json::parse(r.out);
  std::set<std::string> ids, labels, dirs;
  for (const auto& c : plan["cells"]) {
    ids.insert(c["id"].get<std::string>());
    labels.insert(c["id"].get<std::string>().substr(0, 2) + c["label"].get<std::string>() +
                  c["python_tag"].get<std::string>());
    dirs.insert(c["wheel"].get<std::string>());
  }
  EXPECT_EQ(ids, (std::set<std::string>{
                     "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64",
                     "fa2.8.3-torch2.8-rocm63-cp311-linux_x86_64", "fa2.8.3-torch2.8-rocm63-cp312-linux_x86_64",
                     "fa3.0.0b1-torch2.8-cu128-abi3-linux_x86_64-minimal"}));
  EXPECT_EQ(dirs.size(), 5u);  // five wheels, five paths
  for (const auto& c : plan["cells"]) {
    const std::string id = c["id"];
    if (id.starts_with("fa3")) {
      EXPECT_EQ(c["label"], "cu128torch2.8cxx11abiTRUE.minimal");
      EXPECT_EQ(c["wheel"], (dir.path() / "wh" / "fa3.0.0b1/torch2.8/cu128/minimal" /
                             "flash_attn_3-3.0.0b1+cu128torch2.8cxx11abiTRUE.minimal-cp310-abi3-linux_x86_64.whl")
                                .string());
      EXPECT_EQ(c["env"]["FLASH_ATTENTION_DISABLE_BACKWARD"], "TRUE");
      EXPECT_EQ(c["abi3_serves"], nlohmann::json::array({"cp311", "cp312"}));
      EXPECT_FALSE(c.contains("patches"));  // patches are for the matrix's package
    } else if (id.find("rocm63") != std::string::npos) {
      EXPECT_EQ(c["label"], "rocm63torch2.8cxx11abiTRUE");
      EXPECT_EQ(c["backend"], "rocm");
      EXPECT_EQ(c["torch_index"], "rocm6.3");
      EXPECT_EQ(c["env"]["BUILD_TARGET"], "rocm");
      EXPECT_EQ(c["env"]["GPU_ARCHS"], "gfx90a;gfx942");
      EXPECT_THAT(c["cuda_homes"].get<std::vector<std::string>>(), ::testing::Contains("/opt/rocm-6.3*"));
    } else {
      EXPECT_EQ(c["label"], "cu128torch2.8cxx11abiTRUE");
      EXPECT_EQ(c["env"]["BUILD_TARGET"], "cuda");
      EXPECT_EQ(c["patches"][0]["file"], "fix.patch");
      EXPECT_EQ(c["patches"][0]["sha256"].get<std::string>().size(), 64u);
    }
  }
  EXPECT_THAT(plan["notes"][0].get<std::string>(), HasSubstr("one cp310-abi3 wheel serves python cp311, cp312"));

  const auto table = run_fabuild(
      {(dir.path() / "m.yaml").string(), "--dry-run", "--profile", "minimal", "-o", (dir.path() / "wh").string()});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("1 cell to build (of 5 in the matrix)"));
  EXPECT_THAT(table.out, HasSubstr("fa3.0.0b1-torch2.8-cu128-abi3-linux_x86_64-minimal"));
  const auto rocm =
      run_fabuild({(dir.path() / "m.yaml").string(), "--list", "--rocm", "6.3", "-o", (dir.path() / "wh").string()});
  ASSERT_EQ(rocm.code, 0) << rocm.err;
  EXPECT_THAT(rocm.out, HasSubstr("fa2.8.3-torch2.8-rocm63-cp312-linux_x86_64  gfx90a;gfx942"));
  EXPECT_THAT(rocm.out, ::testing::Not(HasSubstr("cu128")));
}

TEST(PackagesCli, AMissingPatchFileIsABadConfigurationBeforeAnythingBuilds) {
  test::ScratchDir dir("packages-cli");
  std::ofstream(dir.path() / "m.yaml") << "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n"
                                          "patches:\n  \"2.8.3\": [patches/no-such.patch]\n";
  const auto r = run_fabuild({(dir.path() / "m.yaml").string(), "-o", (dir.path() / "wh").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("m.yaml:6:3: patch file patches/no-such.patch does not exist ("));
  EXPECT_THAT(r.err, HasSubstr("hint: patch files are named relative to the matrix file"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "wh" / "manifest.json"));
}

// A source directory's hopper/setup.py decides the abi3 floor and the switches (FlashAttention 3
// moved to cp310 and added HDIMDIFF64): here one that says cp311 and lacks HDIMDIFF192.
TEST(PackagesCli, AFlashAttention3SourceDirectorysSetupPyDecidesTheAbi3FloorAndSwitches) {
  test::ScratchDir dir("packages-cli-fa3");
  std::filesystem::create_directories(dir.path() / "fa" / "hopper");
  std::ofstream setup(dir.path() / "fa" / "hopper" / "setup.py");
  for (const char* sw : {"BACKWARD", "SPLIT", "PAGEDKV", "APPENDKV", "SOFTCAP", "PACKGQA", "FP8", "HDIM96", "HDIM192",
                         "HDIM256", "SM80", "HDIMDIFF64"}) {
    setup << "X = os.getenv(\"FLASH_ATTENTION_DISABLE_" << sw << "\", \"FALSE\")\n";
  }
  setup << "setup(options={\"bdist_wheel\": {\"py_limited_api\": \"cp311\"}})\n";
  setup.close();
  std::ofstream(dir.path() / "m.yaml")
      << "package: flash-attn-3\nversions: [\"3.0.0\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\n"
         "python: [cp310, cp311, cp312]\nprofile: [minimal]\nsource: {path: fa}\n";
  const auto r = run_fabuild(
      {(dir.path() / "m.yaml").string(), "--dry-run", "--format", "json", "--cores", "16", "--memory-gb", "128"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto plan = nlohmann::json::parse(r.out);
  ASSERT_EQ(plan["cells"].size(), 1u);
  EXPECT_EQ(plan["cells"][0]["abi_tag"], "abi3");
  EXPECT_EQ(plan["cells"][0]["python_tag"], "cp311");  // the floor: cp310 has no cp311-abi3 wheel
  EXPECT_EQ(plan["cells"][0]["id"], "fa3.0.0-torch2.11-cu130-abi3-linux_x86_64-minimal");
  EXPECT_THAT(plan["warnings"].dump(),
              HasSubstr("profile 'minimal' turns off HDIMDIFF192, which this source's setup.py "
                        "does not read (FLASH_ATTENTION_DISABLE_HDIMDIFF192); it is left out"));
  EXPECT_THAT(plan["cells"][0]["switches_off"].dump(), ::testing::Not(HasSubstr("HDIMDIFF192")));
}

// A package of one's own on a built-in preset keeps the preset's id prefix.
TEST(PackagesCli, ACustomPackageOnAPresetKeepsItsIdPrefix) {
  test::ScratchDir dir("packages-cli-prefix");
  std::ofstream(dir.path() / "m.yaml") << "package: {name: flash_attn_3, preset: flash-attn-3}\nversions: [\"3.0.0\"]\n"
                                          "torch: [\"2.11\"]\ncuda: [\"13.0\"]\npython: [cp312]\nsource: {path: fa}\n";
  const auto r = run_fabuild({(dir.path() / "m.yaml").string(), "--list", "--cores", "16", "--memory-gb", "128"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fa3.0.0-torch2.11-cu130-abi3-linux_x86_64"));
  std::ofstream(dir.path() / "own.yaml") << "package: {name: kernels3, extension: kernels3._C}\nversions: [\"1.0\"]\n"
                                            "torch: [\"2.11\"]\ncuda: [\"13.0\"]\npython: [cp312]\nsource: {path: k}\n";
  const auto own = run_fabuild({(dir.path() / "own.yaml").string(), "--list", "--cores", "16", "--memory-gb", "128"});
  ASSERT_EQ(own.code, 0) << own.err;
  EXPECT_THAT(own.out, HasSubstr("kernels3-1.0-torch2.11-cu130-cp312-linux_x86_64"));
}

}  // namespace
}  // namespace fabuild
