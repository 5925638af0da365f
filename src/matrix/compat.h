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

  // The C++ ABI of torch's Linux wheels where it is not the series rule's (cxx11_abi_from):
  // by CUDA build or by platform; a platform entry wins.
  struct AbiExceptions {
    std::map<Version, Abi> cuda;
    std::map<Platform, Abi> platform;
  };

  std::map<Version, std::vector<Version>> torch_cuda;  // torch series -> its CUDA builds
  // torch series -> the one CUDA build of its wheels on PyPI: what pip installs when the matrix
  // names no torch_index (scripts/refresh-compat.py reads it from PyPI's metadata).
  std::map<Version, Version> torch_pypi_cuda;
  std::map<Version, std::vector<Version>> torch_rocm;  // torch series -> its ROCm builds (index rocmX.Y[.Z])
  std::map<Version, PythonRange> torch_python;         // torch series -> Pythons it ships for
  // torch series -> the free-threaded Pythons it ships for (cp313t wheels); a series not here
  // has none.
  std::map<Version, PythonRange> torch_free_threaded;
  std::vector<MinTorch> fa_min_torch;
  std::map<int, Version> arch_min_cuda;        // arch -> first CUDA whose nvcc knows it
  Version cxx11_abi_from;                      // torch series whose pip wheels are C++11 ABI only
  std::map<Version, AbiExceptions> torch_abi;  // torch series -> its builds the rule does not describe
  // A wheel cell whose cxx11_abi is not that of torch's CUDA build the toolkit picks: false =
  // dropped, true = built against the series' CUDA build that has it (compat.torch_build_for_abi).
  bool switch_torch_build_for_abi = false;

  static CompatTables builtin();

  [[nodiscard]] const std::vector<Version>* cuda_builds(const Version& torch_series) const;
  [[nodiscard]] const std::vector<Version>* rocm_builds(const Version& torch_series) const;
  [[nodiscard]] const PythonRange* python_range(const Version& torch_series) const;
  [[nodiscard]] std::optional<Version> pypi_cuda(const Version& torch_series) const;
  [[nodiscard]] std::optional<Version> min_torch(const Version& fa) const;
  // The C++ ABI of torch `series`'s `cuda_build` (nullopt: its PyPI build) on Linux `platform`.
  [[nodiscard]] Abi torch_abi_of(const Version& series, const std::optional<Version>& cuda_build,
                                 Platform platform) const;
};

}  // namespace fabuild
