#include "app/exports_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"
#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;

Cell fa3_cell() {
  return expand(parse_matrix("package: flash-attn-3\nversions: [\"3.0.0\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\n"
                             "python: [cp312]\nsource: {path: fa}\ntorch_index: https://torch-index.invalid/whl\n",
                             "m.yaml"))
      .cells.at(0);
}

// FlashAttention 3 builds flash_api_stable.cpp against torch >= the target_version its setup.py
// names: that library's C++ entry points are run_mha_fwd/run_mha_bwd, not mha_fwd/mha_bwd.
TEST(ExportsStep, TheExportListFollowsTheBuildFlavourTheSourceAndTorchGive) {
  test::ScratchDir dir("exports-flavour");
  const Cell cell = fa3_cell();
  EXPECT_THAT(expected_exports(cell, dir.path(), "2.11.0+cu130"), ElementsAre("mha_fwd", "mha_bwd"));  // no stable source
  std::ofstream(dir.path() / "flash_api_stable.cpp") << "// stable\n";
  std::ofstream(dir.path() / "setup.py") << "    target_version = parse(\"2.9.0.dev20250830\")\n";
  EXPECT_THAT(expected_exports(cell, dir.path(), "2.11.0+cu130"), ElementsAre("run_mha_fwd", "run_mha_bwd"));
  EXPECT_THAT(expected_exports(cell, dir.path(), "2.9.0"), ElementsAre("run_mha_fwd", "run_mha_bwd"));
  EXPECT_THAT(expected_exports(cell, dir.path(), "2.8.0+cu128"), ElementsAre("mha_fwd", "mha_bwd"));
  EXPECT_THAT(expected_exports(cell, dir.path(), ""), ElementsAre("mha_fwd", "mha_bwd"));  // torch unknown
}

}  // namespace
}  // namespace fabuild
