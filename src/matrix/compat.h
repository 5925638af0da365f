#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "matrix/values.h"
#include "util/version.h"

namespace fabuild {

// Which combinations can exist. Built in (docs/matrix.md lists them), each table overridable
// under `compat:` in the matrix file, entry by entry.
struct CompatTables {
  struct PythonRange {
    PythonTag min;
    PythonTag max;
  };
  struct MinTorch {
    Version fa_prefix;  // "2.8" covers 2.8.x; a longer prefix is more specific
    Version torch;
  };

  std::map<Version, std::vector<Version>> torch_cuda;  // torch series -> its CUDA builds
  // torch series -> the one CUDA build of its wheels on PyPI: what pip installs when the matrix
  // names no torch_index (scripts/refresh-compat.py reads it from PyPI's metadata).
  std::map<Version, Version> torch_pypi_cuda;
  std::map<Version, std::vector<Version>> torch_rocm;  // torch series -> its ROCm builds (index rocmX.Y[.Z])
  std::map<Version, PythonRange> torch_python;         // torch series -> Pythons it ships for
  std::vector<MinTorch> fa_min_torch;
  std::map<int, Version> arch_min_cuda;  // arch -> first CUDA whose nvcc knows it
  Version cxx11_abi_from;                // torch series whose pip wheels are C++11 ABI only

  static CompatTables builtin();

  [[nodiscard]] const std::vector<Version>* cuda_builds(const Version& torch_series) const;
  [[nodiscard]] const std::vector<Version>* rocm_builds(const Version& torch_series) const;
  [[nodiscard]] const PythonRange* python_range(const Version& torch_series) const;
  [[nodiscard]] std::optional<Version> pypi_cuda(const Version& torch_series) const;
  [[nodiscard]] std::optional<Version> min_torch(const Version& fa) const;
};

}  // namespace fabuild
