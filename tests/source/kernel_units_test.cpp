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

}  // namespace
}  // namespace fabuild
