#pragma once

// What a cell is built on. The plan shows it; the provisioners (host, container) act on it.

#include <map>
#include <string>
#include <vector>

#include "matrix/cell.h"
#include "matrix/spec.h"

namespace fabuild {

struct ToolchainPlan {
  Provision kind = Provision::kContainer;
  std::vector<std::string> images;      // container: candidates, first that is present or pulls
  std::vector<std::string> cuda_homes;  // host: where the toolkit is looked for, in order
  std::string python;                   // host: interpreter name; container: path in the image
  std::string torch_requirement;        // "torch==2.8.*"
  std::string torch_index;              // "cu128": the PyTorch index the torch build comes from
  std::string torch_abi;                // "TRUE"/"FALSE": that build's C++ ABI; "" where none applies
  // Where pip installs it from: "https://.../whl/cu128", "/srv/wheels (no index)", or "" for
  // pip's own configured index (which has one CUDA build per torch series).
  std::string torch_from;
};

// `container` and `container_images` (toolchains/containers.yaml) pick a container cell's
// images and interpreter (container.h).
ToolchainPlan plan_toolchain(const Cell& cell, const ContainerSpec& container = {},
                             const std::map<std::string, std::vector<std::string>>& container_images = {});

// The torch wheel a cell installs and where from: "torch==2.6.* cu126 from https://.../whl/cu126".
std::string describe_torch(const ToolchainPlan& plan);

// One line for the plan: "container pytorch/manylinux2_28-builder:cuda12.8 (then ...)".
std::string describe(const ToolchainPlan& plan);

}  // namespace fabuild
