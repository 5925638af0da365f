#pragma once

#include <map>
#include <optional>
#include <string>

#include "matrix/spec.h"

namespace fabuild {

// One build: a wheel for one (package version, torch, CUDA, Python, platform, ABI).
struct Cell {
  const PackagePreset* package = nullptr;
  Version version;                    // FlashAttention version
  Version torch;                      // as written: a series ("2.8") or a pin ("2.8.0")
  CudaSet cuda;                       // as written
  std::optional<Version> torch_cuda;  // resolved: the torch CUDA build the wheel is for
  PythonTag python;
  Platform platform = Platform::kLinuxX86_64;
  Abi abi = Abi::kAuto;               // resolved to kTrue/kFalse once the cell is made
  Abi default_abi = Abi::kTrue;       // what auto gives for this torch and platform
  ArchList archs;
  std::string archs_from;             // where the arch list came from, for the plan
  Provision provision = Provision::kContainer;
  std::map<std::string, std::string> env;  // the matrix's env plus the cell's include entries
  std::vector<std::string> command;        // argv with {placeholders}; empty: the package build
  BuildSettings build;
  Location origin;                    // the include entry that added it; unknown for product cells

  [[nodiscard]] Version torch_series() const;
  // The CUDA version users install against: torch's build; the toolkit until that is known.
  [[nodiscard]] Version wheel_cuda() const;
  // fa2.8.3-torch2.8-cu128-cp312-linux_x86_64, plus -cxx11abiFALSE/TRUE when the ABI is not
  // the torch series' default, so that ids stay the same when an ABI axis is added.
  [[nodiscard]] std::string id() const;
  // The canonical value on an axis, as ids, filters and JSON spell it.
  [[nodiscard]] std::string value(Axis axis) const;
};

}  // namespace fabuild
