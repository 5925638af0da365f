#include "provision/toolchain.h"

#include <fmt/format.h>

#include "provision/container.h"
#include "util/text.h"

namespace fabuild {

namespace {

std::string torch_requirement(const Cell& cell) {
  // A series pins to its newest patch release; a full version pins exactly.
  if (cell.torch.release().size() <= 2) return fmt::format("torch=={}.*", cell.torch.series());
  return fmt::format("torch=={}", cell.torch.str());
}

}  // namespace

ToolchainPlan plan_toolchain(const Cell& cell, const ContainerSpec& container,
                             const std::map<std::string, std::vector<std::string>>& container_images) {
  ToolchainPlan plan;
  plan.kind = cell.provision;
  plan.torch_requirement = torch_requirement(cell);
  plan.torch_index = cell.torch_index_tag();
  if (cell.torch_abi != Abi::kAuto) plan.torch_abi = to_string(cell.torch_abi);
  const std::string cuda = cell.cuda.toolkit.str();
  if (cell.provision == Provision::kContainer) {
    plan.images = image_candidates(cell, container, container_images);
    plan.python = python_in_image(cell, container);
  } else if (cell.rocm()) {
    const std::string mm = fmt::format("{}.{}", cell.cuda.toolkit.major(), cell.cuda.toolkit.minor());
    plan.cuda_homes = {fmt::format("toolchains/ entry for ROCm {}", mm), fmt::format("/opt/rocm-{}*", mm), "$ROCM_PATH",
                       "/opt/rocm"};
    plan.python = fmt::format("python{}", cell.python.dotted());
  } else if (cell.platform == Platform::kWinAmd64) {
    const std::string mm = fmt::format("{}.{}", cell.cuda.toolkit.major(), cell.cuda.toolkit.minor());
    plan.cuda_homes = {fmt::format("toolchains/ entry for CUDA {}", cuda),
                       fmt::format("%CUDA_PATH_V{}_{}%", cell.cuda.toolkit.major(), cell.cuda.toolkit.minor()),
                       fmt::format("%CUDA_PATH_V{}{}%", cell.cuda.toolkit.major(), cell.cuda.toolkit.minor()),
                       "%CUDA_PATH%", fmt::format("%ProgramFiles%\\NVIDIA GPU Computing Toolkit\\CUDA\\v{}", mm)};
    plan.python = fmt::format("py -{}", cell.python.dotted());
  } else {
    plan.cuda_homes = {fmt::format("toolchains/ entry for CUDA {}", cuda), fmt::format("/usr/local/cuda-{}", cuda),
                       "$CUDA_HOME", "/usr/local/cuda"};
    plan.python = fmt::format("python{}", cell.python.dotted());
  }
  return plan;
}

std::string describe_torch(const ToolchainPlan& plan) {
  return fmt::format("{} {}{} from {}", plan.torch_requirement, plan.torch_index,
                     plan.torch_abi.empty() ? std::string() : " (torch ABI " + plan.torch_abi + ")",
                     plan.torch_from.empty() ? "pip's index" : plan.torch_from);
}

std::string describe(const ToolchainPlan& plan) {
  const std::string torch = describe_torch(plan);
  if (plan.kind == Provision::kContainer) {
    std::string images = plan.images.front();
    if (plan.images.size() > 1) {
      images +=
          fmt::format(" (else {})", join(std::vector<std::string>(plan.images.begin() + 1, plan.images.end()), ", "));
    }
    return fmt::format("container {}; {}", images, torch);
  }
  const bool rocm = plan.torch_index.starts_with("rocm");
  // Where the host's toolkit is looked for, in order: which one a host has is the toolkit
  // line's (and the build's) to say.
  return fmt::format("host {} (the first of {}); {}; {}", rocm ? "ROCm" : "nvcc", join(plan.cuda_homes), plan.python,
                     torch);
}

}  // namespace fabuild
