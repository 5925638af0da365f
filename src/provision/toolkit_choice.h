#pragma once

// Where a host cell's CUDA toolkit comes from (`toolkit: auto | host | pip`), decided once per
// CUDA set: a toolkit installed on this machine, NVIDIA's packages from PyPI installed by an
// earlier run, PyPI's packages still to install, or nothing, with every place looked at. The
// plan (--dry-run) prints the decision; the build acts on the same one.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "matrix/values.h"
#include "provision/host.h"
#include "provision/pip_toolkit.h"
#include "util/expected.h"

namespace fabuild {

struct ToolkitChoice {
  // What cells build with: a host toolkit, an installed pip toolkit, or the one `install`
  // makes (its paths are known before it exists; its build number is not); or a Failure saying
  // why there is none and what to do (the cells' FAILED line, the plan's "none: ...").
  Expected<Toolkit> toolkit = fail("no toolkit looked for");
  std::optional<PipToolkit> install;  // set when PyPI's packages are still to be installed
  std::vector<Probe> tried;           // the host places looked at

  // For the plan: "host /usr/local/cuda-13.0 (nvcc 13.0.88)", "PyPI, installed in DIR (nvcc
  // 13.2.86)", "PyPI: nvidia-cuda-nvcc==13.2.* ... into DIR, before the first cell".
  [[nodiscard]] std::string describe() const;
};

// `root`: where PyPI toolkits live (<fabuild cache>/toolkits).
ToolkitChoice choose_toolkit(HostProbe& probe, const Version& cuda, ToolkitSource source,
                             const std::filesystem::path& root);

}  // namespace fabuild
