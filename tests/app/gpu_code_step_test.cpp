// The GPU code of a wheel's modules against the cell's archs (app/gpu_code_step.h).

#include "app/gpu_code_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "matrix/preset.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;

Cell cell_of(const char* package, ArchList archs) {
  Cell c;
  c.package = find_preset(package);
  auto setup = std::make_shared<CellSetup>();
  setup->archs = std::move(archs);
  c.setup = setup;
  return c;
}

TEST(GpuCode, EveryAskedArchInEachModuleAndNoOther) {
  const Cell fa2 = cell_of("flash-attn", {80, 90});
  EXPECT_EQ(gpu_code_mismatch(fa2, {{"flash_attn_2_cuda.so", {{"sm_80", "sm_90"}, {}}}}), "");
  // Objects of an arch-80 build in an arch-90 cell (a poisoned cache): both lists named.
  const Cell fa2_90 = cell_of("flash-attn", {90});
  EXPECT_EQ(gpu_code_mismatch(fa2_90, {{"flash_attn_2_cuda.so", {{"sm_80"}, {}}}}),
            "the cell asks for archs 90, and flash_attn_2_cuda.so holds sm_80, not sm_90, and sm_80 it was not asked "
            "for");
  EXPECT_THAT(gpu_code_mismatch(fa2, {{"flash_attn_2_cuda.so", {{"sm_90"}, {"sm_90"}}}}),
              HasSubstr("holds sm_90, not sm_80"));
  EXPECT_THAT(gpu_code_mismatch(fa2, {}), HasSubstr("its modules hold no GPU code; the cell asks for archs 80;90"));
}

// FlashAttention 3 takes no arch list (sm_90a always, sm_80 unless switched off) and compiles its
// scheduler for sm_80 too: an arch it did not ask for is no fault there, a missing one is.
TEST(GpuCode, APackageThatTakesNoArchListIsHeldToWhatItWasAsked) {
  const Cell fa3 = cell_of("flash-attn-3", {90});
  EXPECT_EQ(gpu_code_mismatch(fa3, {{"flash_attn_3/_C.abi3.so", {{"sm_80", "sm_90a"}, {}}}}), "");
  EXPECT_THAT(gpu_code_mismatch(fa3, {{"flash_attn_3/_C.abi3.so", {{"sm_80"}, {}}}}), HasSubstr("not sm_90"));
}

}  // namespace
}  // namespace fabuild
