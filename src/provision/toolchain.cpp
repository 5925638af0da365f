#include "provision/toolchain.h"

#include <fmt/format.h>

#include "util/text.h"

namespace fabuild {

namespace {

// The manylinux builder images the seed build scripts used, per CUDA toolkit.
std::vector<std::string> default_images(const Cell& cell) {
  const std::string cuda = cell.cuda.toolkit.str();
  if (cell.platform == Platform::kLinuxAarch64) {
    return {fmt::format("pytorch/manylinuxaarch64-builder:cuda{}", cuda)};
  }
  return {fmt::format("pytorch/manylinux2_28-builder:cuda{}", cuda),
          fmt::format("sameli/manylinux_2_34_x86_64_cuda_{}", cuda)};
}

std::string torch_requirement(const Cell& cell) {
  // A series pins to its newest patch release; a full version pins exactly.
  if (cell.torch.release().size() <= 2) return fmt::format("torch=={}.*", cell.torch.series());
  return fmt::format("torch=={}", cell.torch.str());
}

}  // namespace

ToolchainPlan plan_toolchain(const Cell& cell) {
  ToolchainPlan plan;
  plan.kind = cell.provision;
  plan.torch_requirement = torch_requirement(cell);
  plan.torch_index = cu_tag(cell.wheel_cuda());
  const std::string cuda = cell.cuda.toolkit.str();
  if (cell.provision == Provision::kContainer) {
    plan.images = default_images(cell);
    plan.python = fmt::format("/opt/python/{0}-{0}/bin/python", cell.python.str());
  } else if (cell.platform == Platform::kWinAmd64) {
    plan.cuda_homes = {fmt::format("toolchains/ entry for CUDA {}", cuda),
                       fmt::format("%CUDA_PATH_V{}_{}%", cell.cuda.toolkit.major(), cell.cuda.toolkit.minor())};
    plan.python = fmt::format("py -{}", cell.python.dotted());
  } else {
    plan.cuda_homes = {fmt::format("toolchains/ entry for CUDA {}", cuda), fmt::format("/usr/local/cuda-{}", cuda),
                       "$CUDA_HOME", "/usr/local/cuda"};
    plan.python = fmt::format("python{}", cell.python.dotted());
  }
  return plan;
}

std::string describe(const ToolchainPlan& plan) {
  const std::string torch = fmt::format("{} ({})", plan.torch_requirement, plan.torch_index);
  if (plan.kind == Provision::kContainer) {
    std::string images = plan.images.front();
    if (plan.images.size() > 1) {
      images += fmt::format(" (else {})", join(std::vector<std::string>(plan.images.begin() + 1, plan.images.end()), ", "));
    }
    return fmt::format("container {}; {}", images, torch);
  }
  return fmt::format("host nvcc from {}; {}; {}", plan.cuda_homes.front(), plan.python, torch);
}

}  // namespace fabuild
