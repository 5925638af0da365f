#include "source/kernel_units.h"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

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

// The library recipe's count (cmake/flavours.cmake): plain forward files only, by head dim,
// dtype, causal and arch. tests/e2e/library_build.sh checks it against the recipe's own count.
TEST_F(HopperUnits, TheLibraryCountsThePlainForwardFilesTheArchsKeep) {
  const fs::path root = dir.path() / "clone";
  fs::create_directories(root / "hopper");
  fs::copy(dir.path() / "instantiations", root / "hopper" / "instantiations");
  EXPECT_FALSE(count_library_units(root, {}, {90}).has_value());  // no hopper/flash.h: no flavour
  std::ofstream(root / "hopper" / "flash.h") << "\n";
  // hdim 64 and 128 x bf16/fp16/e4m3 _sm90 (6), no plain _sm80 file here.
  const auto full = count_library_units(root, {}, {90});
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->available, 6u);
  EXPECT_EQ(full->kernels, 6u);
  EXPECT_EQ(full->total, 9u);  // the C API, the backend, the varlen scheduler
  EXPECT_EQ(count_library_units(root, {"FP8", "HDIM128"}, {90})->kernels, 2u);
  EXPECT_EQ(count_library_units(root, {}, {80})->kernels, 0u);  // _sm90 files need arch 90
}

TEST(LibraryUnits, FlashAttention2FilesServeEveryArchAndCausalIsASwitch) {
  test::ScratchDir dir{"fa2-units"};
  const fs::path src = dir.path() / "csrc" / "flash_attn" / "src";
  fs::create_directories(src);
  std::ofstream(src / "flash.h") << "\n";
  for (const char* h : {"32", "64", "128", "256"}) {
    for (const char* d : {"bf16", "fp16"}) {
      for (const char* c : {"", "_causal"}) {
        std::ofstream(src / (std::string("flash_fwd_hdim") + h + "_" + d + c + "_sm80.cu")) << "\n";
      }
      std::ofstream(src / (std::string("flash_bwd_hdim") + h + "_" + d + "_sm80.cu")) << "\n";  // not the library's
      std::ofstream(src / (std::string("flash_fwd_split_hdim") + h + "_" + d + "_sm80.cu")) << "\n";
    }
  }
  const auto full = count_library_units(dir.path(), {}, {80, 90});
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->available, 16u);
  EXPECT_EQ(full->kernels, 16u);
  EXPECT_EQ(full->total, 18u);
  // minimal: head dims 64 and 128 x fp16/bf16 x causal or not.
  EXPECT_EQ(count_library_units(dir.path(), {"HDIM32", "HDIM256"}, {90})->kernels, 8u);
  EXPECT_EQ(count_library_units(dir.path(), {"HDIM32", "HDIM256", "CAUSAL", "FP16"}, {90})->kernels, 2u);
}

}  // namespace
}  // namespace fabuild
