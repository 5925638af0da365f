#include "provision/toolchain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Cell cell_with(const std::string& extra) {
  return expand(
             parse_matrix("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n" + extra, "m.yaml"))
      .cells.at(0);
}

TEST(Toolchain, ContainerImagesPerCudaSetWithFallback) {
  const ToolchainPlan p = plan_toolchain(cell_with(""));
  EXPECT_THAT(p.images,
              ElementsAre("pytorch/manylinux2_28-builder:cuda12.8", "sameli/manylinux_2_34_x86_64_cuda_12.8"));
  EXPECT_EQ(p.python, "/opt/python/cp312-cp312/bin/python");
  EXPECT_EQ(p.torch_requirement, "torch==2.8.*");
  EXPECT_EQ(p.torch_index, "cu128");
}

TEST(Toolchain, HostLooksForTheToolkitAndPython) {
  const ToolchainPlan p = plan_toolchain(cell_with("provision: host\n"));
  EXPECT_THAT(p.cuda_homes,
              ElementsAre(HasSubstr("toolchains/"), "/usr/local/cuda-12.8", "$CUDA_HOME", "/usr/local/cuda"));
  EXPECT_EQ(p.python, "python3.12");
  EXPECT_THAT(describe(p), HasSubstr("python3.12; torch==2.8.* cu128 (torch ABI TRUE) from pip's index"));
}

TEST(Toolchain, PinnedTorch) {
  const Cell c =
      expand(parse_matrix("versions: [2.8.3]\ntorch: [\"2.8.0\"]\ncuda: [\"12.8\"]\npython: [cp312]\n", "m.yaml"))
          .cells.at(0);
  EXPECT_EQ(plan_toolchain(c).torch_requirement, "torch==2.8.0");
}

}  // namespace
}  // namespace fabuild
