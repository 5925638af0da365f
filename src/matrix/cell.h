#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "matrix/spec.h"

namespace fabuild {

// One build: a wheel for one (package version, torch, CUDA, Python, platform, ABI), or the
// torch-free library for one (package version, CUDA, platform), with a profile either way.
// A GPU set as Cell::value(Axis::kGpu) spells it: "12.8" (CUDA) or "rocm6.2" (ROCm).
GpuSet parse_gpu_set(const std::string& canonical);

// How a cell is built beyond its axis values: the matrix's settings as its include entries
// change them, and which entry added it. Cells share one until an include changes theirs: a
// cell of a 100 000-cell matrix holds a pointer where it held a map, vectors and a source.
struct CellSetup {
  ArchList archs;
  std::string archs_from;                        // where the arch list came from, for the plan
  Location archs_where;                          // the include that named them; unknown: they follow the GPU set
  std::vector<std::string> rocm_archs;           // ROCm cells: GPU_ARCHS (gfx90a, ...)
  std::vector<std::string> disabled;             // the package switches the cell's profile turns off
  std::optional<SourceSpec> source;              // an include's own source; unset: the matrix's
  std::map<std::string, std::string> env;        // the matrix's env plus the cell's include entries
  std::vector<std::string> command;              // argv with {placeholders}; empty: the package build
  ToolkitSource toolkit = ToolkitSource::kAuto;  // where a host cell's CUDA toolkit comes from
  BuildSettings build;
  Location origin;  // the include entry that added it; unknown for product cells
  // Its values on the declared axes (matrix/axes.h), in the table's order; a value it lacks is
  // the axis's fallback. Here, not in Cell: the cells of one combination share it.
  std::vector<std::string> declared;
};

// The setup of a cell made outside a matrix (tests, tools): no env, command or own source.
const std::shared_ptr<const CellSetup>& default_setup();

struct Cell {
  PresetPtr package;
  std::shared_ptr<const CellSetup> setup = default_setup();  // never null
  Version version;                                           // FlashAttention version
  Version torch;                                             // as written: a series ("2.8") or a pin ("2.8.0")
  GpuSet cuda;                                               // as written
  std::optional<Version> torch_cuda;                         // resolved: the torch CUDA build the wheel is for
  PythonTag python;
  Platform platform = Platform::kLinuxX86_64;
  Abi abi = Abi::kAuto;          // resolved to kTrue/kFalse once the cell is made
  Abi default_abi = Abi::kTrue;  // what auto gives for this torch and platform
  // The C++ ABI of torch's build the cell installs (torch_cuda's, CompatTables::torch_abi_of);
  // kAuto where none is known (Windows, ROCm, a library cell).
  Abi torch_abi = Abi::kAuto;
  Provision provision = Provision::kContainer;
  Artifact artifact = Artifact::kWheel;  // a library cell's torch, python and abi are unset
  std::string profile{kDefaultProfile};  // the kernel profile (its switches: disabled())
  // An abi3 package (flash-attn-3): one wheel serves these Python tags; `python` builds it.
  std::vector<PythonTag> abi3_pythons;
  // A stable-ABI cell (docs/stable-abi.md): one wheel for every torch from this release on
  // (its source's TORCH_TARGET_VERSION), built against `torch`; unset: a wheel for `torch` alone.
  std::optional<Version> stable_floor;
  std::vector<std::string> patches;  // patch files for its version, as the matrix names them

  [[nodiscard]] const ArchList& archs() const { return setup->archs; }
  [[nodiscard]] const std::string& archs_from() const { return setup->archs_from; }
  [[nodiscard]] const std::vector<std::string>& rocm_archs() const { return setup->rocm_archs; }
  [[nodiscard]] const std::vector<std::string>& disabled() const { return setup->disabled; }
  [[nodiscard]] const std::optional<SourceSpec>& source() const { return setup->source; }
  [[nodiscard]] const std::map<std::string, std::string>& env() const { return setup->env; }
  [[nodiscard]] const std::vector<std::string>& command() const { return setup->command; }
  [[nodiscard]] const BuildSettings& build() const { return setup->build; }
  [[nodiscard]] ToolkitSource toolkit_source() const { return setup->toolkit; }
  [[nodiscard]] const Location& origin() const { return setup->origin; }
  [[nodiscard]] const std::vector<std::string>& declared() const { return setup->declared; }
  // A copy of the setup that is this cell's alone, to change.
  CellSetup& own_setup();

  [[nodiscard]] Version torch_series() const;
  // The CUDA (or ROCm) version users install against: torch's build; the toolkit until that
  // is known.
  [[nodiscard]] const Version& wheel_cuda() const;
  [[nodiscard]] bool rocm() const { return cuda.backend == Backend::kRocm; }
  // What labels and paths call the GPU set: "cu128", "rocm62".
  [[nodiscard]] std::string gpu_tag() const;
  // torch's package index for it: "cu128", "rocm6.2.4".
  [[nodiscard]] std::string torch_index_tag() const;
  [[nodiscard]] bool library() const { return artifact == Artifact::kLibrary; }
  // A library cell's CMAKE_BUILD_TYPE: Release unless `build: {type: ...}` says otherwise.
  [[nodiscard]] const std::string& build_type() const;
  // "-debug" or "-relwithdebinfo" where a library cell's id, directory and file name say its
  // build type; "" for Release and for wheels.
  [[nodiscard]] std::string build_type_suffix() const;
  [[nodiscard]] bool abi3() const { return !library() && !abi3_floor().empty(); }
  // The limited-API floor of its abi3 wheel ("cp310"): the package's, or its stable build's
  // for a stable-ABI cell; "" for a wheel per Python.
  [[nodiscard]] const std::string& abi3_floor() const;
  [[nodiscard]] bool stable() const { return stable_floor.has_value(); }
  // The torch its id, label and directory name: "2.8", or "2.10andhigher" for a stable-ABI cell.
  [[nodiscard]] std::string torch_spelling() const;
  // The wheel's Python and ABI tags: cp312-cp312, or cp39-abi3.
  [[nodiscard]] std::string python_tag() const;
  [[nodiscard]] std::string abi_tag() const;
  // fa2.8.3-torch2.8-cu128-cp312-linux_x86_64, plus -cxx11abiFALSE/TRUE when the ABI is not
  // the torch series' default, so that ids stay the same when an ABI axis is added, plus
  // -<profile> for a profile other than full. An abi3 cell says abi3 where the Python goes. A
  // library cell says lib where torch goes and has no Python: fa3.0.0-lib-cu130-linux_x86_64-minimal,
  // and its build type after the profile when not Release: ...-minimal-debug.
  [[nodiscard]] std::string id() const;
  // The canonical value on an axis, as ids, filters and JSON spell it; "" on an axis the cell
  // does not have (a library cell's torch, python and cxx11_abi).
  [[nodiscard]] std::string value(Axis axis) const;
};

}  // namespace fabuild
