#pragma once

#include <map>
#include <optional>
#include <string>

#include "matrix/spec.h"

namespace fabuild {

// One build: a wheel for one (package version, torch, CUDA, Python, platform, ABI).
// A GPU set as Cell::value(Axis::kCuda) spells it: "12.8" (CUDA) or "rocm6.2" (ROCm).
CudaSet parse_gpu_set(const std::string& canonical);

struct Cell {
  PresetPtr package;
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
  std::vector<std::string> rocm_archs;  // ROCm cells: GPU_ARCHS (gfx90a, ...)
  std::string profile{kDefaultProfile};  // the kernel profile...
  std::vector<std::string> disabled;     // ...and the package switches it turns off
  // An abi3 package (flash-attn-3): one wheel serves these Python tags; `python` builds it.
  std::vector<PythonTag> abi3_pythons;
  std::optional<SourceSpec> source;    // an include's own source; unset: the matrix's
  std::vector<std::string> patches;    // patch files for its version, as the matrix names them
  Provision provision = Provision::kContainer;
  std::map<std::string, std::string> env;  // the matrix's env plus the cell's include entries
  std::vector<std::string> command;        // argv with {placeholders}; empty: the package build
  BuildSettings build;
  Location origin;                    // the include entry that added it; unknown for product cells

  [[nodiscard]] Version torch_series() const;
  // The CUDA (or ROCm) version users install against: torch's build; the toolkit until that
  // is known.
  [[nodiscard]] Version wheel_cuda() const;
  [[nodiscard]] bool rocm() const { return cuda.backend == Backend::kRocm; }
  // What labels and paths call the GPU set: "cu128", "rocm62".
  [[nodiscard]] std::string gpu_tag() const;
  // torch's package index for it: "cu128", "rocm6.2.4".
  [[nodiscard]] std::string torch_index_tag() const;
  [[nodiscard]] bool abi3() const { return !package->abi3.empty(); }
  // The wheel's Python and ABI tags: cp312-cp312, or cp39-abi3.
  [[nodiscard]] std::string python_tag() const;
  [[nodiscard]] std::string abi_tag() const;
  // fa2.8.3-torch2.8-cu128-cp312-linux_x86_64, plus -cxx11abiFALSE/TRUE when the ABI is not
  // the torch series' default, so that ids stay the same when an ABI axis is added, plus
  // -<profile> for a profile other than full. An abi3 cell says abi3 where the Python goes.
  [[nodiscard]] std::string id() const;
  // The canonical value on an axis, as ids, filters and JSON spell it.
  [[nodiscard]] std::string value(Axis axis) const;
};

}  // namespace fabuild
