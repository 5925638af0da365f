#include "source/kernel_units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

// hopper/instantiations/ with every file FlashAttention 3.0.0's setup.py can name for head dims
// 64 and 128 (and 192_128), fp16/bf16/e4m3: its sm_90 forward variants, sm_80 forward and the
// backward kernels. Checked against setup.py itself on the real tree: minimal 4 kernels,
// inference 16, full 290 of 451.
class HopperUnits : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir.path() / "instantiations");
    for (const char* h : {"64", "128"}) {
      for (const char* d : {"bf16", "fp16", "e4m3"}) {
        for (const char* v : {"", "_paged", "_split", "_paged_split", "_softcap", "_packgqa", "_softcap_packgqa",
                              "_paged_split_softcap"}) {
          touch(std::string("flash_fwd_hdim") + h + "_" + d + v + "_sm90.cu");
        }
      }
      for (const char* d : {"bf16", "fp16"}) {
        touch(std::string("flash_fwd_hdim") + h + "_" + d + "_softcapall_sm80.cu");
        touch(std::string("flash_bwd_hdim") + h + "_" + d + "_softcapall_sm90.cu");
        touch(std::string("flash_bwd_hdim") + h + "_" + d + "_sm80.cu");
      }
    }
    touch("flash_fwd_hdim192_128_bf16_sm90.cu");
  }
  void touch(const std::string& name) { std::ofstream(dir.path() / "instantiations" / name) << "\n"; }

  test::ScratchDir dir{"hopper-units"};
};

TEST_F(HopperUnits, MinimalIsFourKernelsPlusTheApiAndTheScheduler) {
  const auto units =
      count_hopper_units(dir.path(), {"BACKWARD", "SPLIT", "PAGEDKV", "APPENDKV", "SOFTCAP", "PACKGQA", "FP8", "HDIM96",
                                      "HDIM192", "HDIM256", "SM80", "HDIMDIFF64", "HDIMDIFF192"});
  ASSERT_TRUE(units.has_value());
  EXPECT_EQ(units->kernels, 4u);  // hdim 64 and 128 x bf16 and fp16, forward, sm_90
  EXPECT_EQ(units->total, 6u);
}

TEST_F(HopperUnits, EverySwitchLeftOnAddsItsVariants) {
  const auto all = count_hopper_units(dir.path(), {});
  ASSERT_TRUE(all.has_value());
  // sm_90 forward: the 8 variants per hdim x dtype written above are all names setup.py gives
  // (pack-GQA only without paged or split): 2 x 3 x 8 = 48; plus 192_128 bf16; sm_80 forward
  // with softcapall 4; backward sm_90 4 and sm_80 4.
  EXPECT_EQ(all->kernels, 48u + 1 + 4 + 4 + 4);
  EXPECT_EQ(all->total, all->kernels + 3);  // split: the combine kernel too
  EXPECT_EQ(all->available, 61u);
  const auto no_fp8 = count_hopper_units(dir.path(), {"FP8"});
  EXPECT_EQ(all->kernels - no_fp8->kernels, 16u);  // e4m3: 2 hdims x 8 variants
  EXPECT_FALSE(count_hopper_units(dir.path() / "absent", {}).has_value());
}

// The library recipe's count (cmake/flavours.cmake): forward, paged, split and backward files by
// head dim, dtype, causal, arch and the variants' switches, for the flavour the package names.
// tests/e2e/library_build.sh checks it against the recipe's own count.
TEST_F(HopperUnits, TheLibraryCountsTheFilesTheSwitchesAndArchsKeep) {
  const fs::path root = dir.path() / "clone";
  fs::create_directories(root / "hopper");
  fs::copy(dir.path() / "instantiations", root / "hopper" / "instantiations");
  for (const char* name : {"flash_bwd_hdim64_bf16_sm90.cu", "flash_bwd_hdim64_fp16_sm90.cu",
                           "flash_bwd_hdim128_bf16_sm90.cu", "flash_bwd_hdim128_fp16_sm90.cu"}) {
    std::ofstream(root / "hopper" / "instantiations" / name) << "\n";
  }
  EXPECT_FALSE(count_library_units(root, "fa2", {}, {90}).has_value());  // no csrc/flash_attn files
  EXPECT_FALSE(count_library_units(root, "fa4", {}, {90}).has_value());  // no such flavour
  const auto full = count_library_units(root, "fa3", {}, {90});
  ASSERT_TRUE(full.has_value());
  // hdim 64 and 128 x bf16/fp16/e4m3 x plain, paged, split, paged-split _sm90, and bf16/fp16
  // backward _sm90 (28); the backward _sm80 files need an 8x arch.
  EXPECT_EQ(full->available, 32u);
  EXPECT_EQ(full->kernels, 28u);
  EXPECT_THAT(full->others, ElementsAre("the C API", "the backend", "the varlen scheduler", "the combine kernel",
                                        "the backward backend"));
  EXPECT_EQ(full->total, 33u);
  // minimal: the plain forward files of fp16/bf16 (4), the C API, the backend, the scheduler.
  const auto minimal = count_library_units(root, "fa3", {"BACKWARD", "SPLIT", "PAGEDKV", "FP8"}, {90});
  EXPECT_EQ(minimal->kernels, 4u);
  EXPECT_EQ(minimal->total, 7u);
  // inference: plain, paged, split and paged-split forward files.
  EXPECT_EQ(count_library_units(root, "fa3", {"BACKWARD", "FP8"}, {90})->kernels, 16u);
  EXPECT_EQ(count_library_units(root, "fa3", {"FP8", "HDIM128"}, {90})->kernels, 10u);
  // Arch 80 alone: the _sm90 files need arch 90; this tree's _sm80 files are backward ones (4).
  EXPECT_EQ(count_library_units(root, "fa3", {}, {80})->kernels, 4u);
  EXPECT_EQ(count_library_units(root, "fa3", {"SM80"}, {80})->kernels, 0u);
}

// A FlashAttention clone holds hopper/ and csrc/flash_attn: the package's flavour says which.
TEST(LibraryUnits, FlashAttention2FilesServeEveryArchAndTheFlavourIsThePackages) {
  test::ScratchDir dir{"fa2-units"};
  const fs::path src = dir.path() / "csrc" / "flash_attn" / "src";
  fs::create_directories(src);
  fs::create_directories(dir.path() / "hopper" / "instantiations");
  std::ofstream(dir.path() / "hopper" / "instantiations" / "flash_fwd_hdim64_bf16_sm90.cu") << "\n";
  for (const char* h : {"32", "64", "128", "256"}) {
    for (const char* d : {"bf16", "fp16"}) {
      for (const char* c : {"", "_causal"}) {
        for (const char* kind : {"flash_fwd_", "flash_fwd_split_", "flash_fwd_split_align_", "flash_bwd_"}) {
          std::ofstream(src / (std::string(kind) + "hdim" + h + "_" + d + c + "_sm80.cu")) << "\n";
        }
      }
    }
  }
  const auto full = count_library_units(dir.path(), "fa2", {}, {80, 90});
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->available, 64u);
  EXPECT_EQ(full->kernels, 64u);
  // the C API, the backend, the backward backend, the gradient sum, the LSE fix-up
  EXPECT_EQ(full->total, 69u);
  // minimal: head dims 64 and 128 x fp16/bf16 x causal or not, forward only.
  const std::vector<std::string> minimal = {"BACKWARD", "SPLIT", "PAGEDKV", "HDIM32", "HDIM256"};
  EXPECT_EQ(count_library_units(dir.path(), "fa2", minimal, {90})->kernels, 8u);
  EXPECT_EQ(count_library_units(dir.path(), "fa2", minimal, {90})->total, 11u);
  // inference: and the split files its paged cache runs on.
  EXPECT_EQ(count_library_units(dir.path(), "fa2", {"BACKWARD", "HDIM32", "HDIM256"}, {90})->kernels, 24u);
  EXPECT_EQ(count_library_units(dir.path(), "fa2", {"HDIM32", "HDIM256", "CAUSAL", "FP16"}, {90})->kernels, 8u);
  // The same tree as FlashAttention 3: its one hopper/ file.
  EXPECT_EQ(count_library_units(dir.path(), "fa3", {}, {90})->kernels, 1u);
}

}  // namespace
}  // namespace fabuild
