#pragma once

// What fabuild knows about one buildable package: its names, where its setup.py is, the
// archs its build knows, the environment variables its setup.py reads (docs/packages.md), its
// kernel switches and profiles, and the C++ entry points its library exports. Built in:
// flash-attn (FlashAttention 2), flash-attn-3 (FlashAttention 3, hopper/), flash-example
// (examples/flash_example) and torch-extension, the generic base a matrix fills in for other
// kernel packages built the same way (docs/packages.md).

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "matrix/values.h"

namespace fabuild {

// How a kernel profile's switches reach the build (docs/packages.md, "Kernel profiles").
struct KernelSwitches {
  enum class Kind {
    kEnv,     // FlashAttention 3: FLASH_ATTENTION_DISABLE_<X>=TRUE, read by its setup.py
    kDefine,  // FlashAttention 2: -DFLASHATTENTION_DISABLE_<X> through NVCC_APPEND_FLAGS and CPPFLAGS
  };
  Kind kind = Kind::kDefine;
  std::string prefix;              // FLASH_ATTENTION_DISABLE_ or FLASHATTENTION_DISABLE_
  std::vector<std::string> known;  // the switches it has ("BACKWARD", "HDIM96", ...); empty = any
};

// The archs one range of a package's releases knows, as its setup.py of those releases says.
struct ArchEra {
  Version from;            // the first release of the era; the next era's `from` ends it
  ArchList known;          // archs its setup.py turns into -gencode flags
  ArchList defaults;       // what it builds when no arch list is given
  bool selectable = true;  // false: it reads no arch variable and always builds `defaults`
};

struct PackagePreset {
  std::string name;        // as in the matrix file and on PyPI: "flash-attn"
  std::string dist_name;   // wheel file prefix: "flash_attn"
  std::string id_prefix;   // cell ids and wheelhouse directories: "fa" -> fa2.8.3
  std::string extension;   // its compiled module, imported to smoke-test a wheel: "flash_attn_2_cuda"
  ArchList known_archs;    // archs its setup.py turns into -gencode flags; others are ignored
  ArchList default_archs;  // its setup.py default, used when the matrix names none
  // By release, ascending (FlashAttention: sm_110 from 2.8.4, an arch list at all from 2.7.3);
  // empty = known_archs and default_archs for every release. known_archs is their union.
  std::vector<ArchEra> arch_eras;
  // Environment contract. archs_env "" = archs are not passed through the environment
  // (FlashAttention 3 builds sm_90a, and sm_80 unless FLASH_ATTENTION_DISABLE_SM80).
  std::string archs_env;          // FLASH_ATTN_CUDA_ARCHS
  std::string force_build_env;    // FLASH_ATTENTION_FORCE_BUILD (else it downloads a guessed wheel)
  std::string local_version_env;  // FLASH_ATTN_LOCAL_VERSION
  std::string cxx11_abi_env;      // FLASH_ATTENTION_FORCE_CXX11_ABI
  // Variables people set for this package that it never reads, with what to do instead.
  struct IgnoredEnv {
    std::string name;
    std::string advice;
  };
  std::vector<IgnoredEnv> ignored_env;

  // The local version label (docs/matrix.md, "Ids, labels and paths"): {gpu} cu128 or rocm62,
  // {gpu_major} cu12 or rocm62, {cuda} 12.8, {cuda_major} 12, {torch} 2.8, {abi} TRUE. A
  // profile other than the default adds ".<profile>". Its case is kept in the file name.
  std::string label = "{gpu}torch{torch}cxx11abi{abi}";
  // The label of win_amd64 cells, as the community's Windows FlashAttention wheels are named
  // ("flash_attn-2.8.3+cu128torch2.8-cp312-cp312-win_amd64.whl"): no C++11 ABI part, a libstdc++
  // switch that MSVC builds do not have. A label the matrix gives (`label:`, `naming:`) is used
  // for every platform.
  std::string windows_label = "{gpu}torch{torch}";
  // `naming: upstream`: the label of the package's own published wheels, which its setup.py
  // looks for (FlashAttention's get_wheel_url); "" = it publishes none.
  std::string upstream_label;
  // Where the label goes: METADATA's Version and the file name (fabuild's way: what pip installs
  // says what it is), or the file name only (`naming: upstream`: the package's release renames
  // a plain-version wheel, and its setup.py renames a download back to the plain version before
  // installing it, which a label inside METADATA would make pip refuse).
  bool label_in_metadata = true;
  // `platform_tag: manylinux_2_28`: a Linux wheel is filed as manylinux_2_28_<arch> once its
  // modules' glibc needs are checked against the policy (wheel/retag.h); "" = linux_<arch>.
  std::string manylinux;
  std::string source_subdir;           // where setup.py is in the source tree: "hopper" for FlashAttention 3
  bool counts_hopper_units = false;    // the plan counts its units per profile (source/kernel_units.h)
  std::string pip_project;             // `source: pip` fetches this project's sdist; "" = none on PyPI
  std::string git_ref = "v{version}";  // `source: {git}` without a ref; "" = the matrix must name one
  // "cp39": one abi3 wheel (cp39-abi3) per torch x CUDA set, built with the lowest Python of the
  // matrix from this one up; "" = one wheel per Python tag.
  std::string abi3;
  KernelSwitches switches;
  // Built-in kernel profiles: name -> switches turned off. "full" (nothing off) always exists.
  std::map<std::string, std::vector<std::string>> profiles;
  // C++ entry points its extension library must export (docs/cpp-consumers.md); empty = no check.
  std::vector<std::string> exports;
  // A build against torch's stable ABI (FlashAttention 3 with torch >= the target_version its
  // setup.py names) compiles `stable_api_source` instead and exports `stable_exports`.
  std::string stable_api_source;
  std::vector<std::string> stable_exports;
  // What its source says of a build against torch's stable ABI (source/setup_py.h, read by the
  // plan from a source directory): such a wheel serves every torch from `floor` on, and a
  // matrix's torch series from `from` on collapse into it (docs/stable-abi.md). Unset: per series.
  struct StableAbi {
    Version floor;  // TORCH_TARGET_VERSION: the oldest torch it loads on
    Version from;   // the oldest torch it is built against stably (the floor when the source says none)
    // Variables the source needs "TRUE" for it: a package switch (FLASH_ATTENTION_DISABLE_DROPOUT)
    // that the cell's profile must turn off, or an opt-in of its own (FLASH_EXAMPLE_STABLE_ABI).
    std::vector<std::string> needs;
    std::vector<std::string> needs_where;  // "setup.py:352" for each of needs
    std::string where;                     // the define's "setup.py:355"
    // "cp310": its limited API comes with the stable build only (abi3 is per-series otherwise).
    std::string limited_api;
  };
  std::shared_ptr<const StableAbi> stable;
  // The torch-free library (`artifact: library`, recipes/flash-attn-lib, docs/library.md): whether
  // the recipe builds this package, the switches its build reads (empty: those of `switches`),
  // and its own profiles (empty: `profiles`).
  bool library = false;
  std::string library_flavour;  // what the recipe builds from the source: fa3, fa2 or example
  std::vector<std::string> library_switches;
  std::map<std::string, std::vector<std::string>> library_profiles;
  // Builds for ROCm too (BUILD_TARGET=rocm, GPU_ARCHS), with these gfx archs.
  std::vector<std::string> rocm_archs;          // known
  std::vector<std::string> default_rocm_archs;  // when the matrix names none
};

using PresetPtr = std::shared_ptr<const PackagePreset>;

// The switches and built-in profiles of the package's wheel or library.
const std::vector<std::string>& known_switches(const PackagePreset& preset, Artifact artifact);
const std::map<std::string, std::vector<std::string>>& profiles_of(const PackagePreset& preset, Artifact artifact);

// The archs `version` of the package knows and builds by default (its era's, else the preset's).
ArchEra arch_era(const PackagePreset& preset, const Version& version);
// The era of `version` among the preset's arch_eras, without a copy; null where none applies
// (the preset's own lists: what arch_era gives then).
const ArchEra* release_era(const PackagePreset& preset, const Version& version);

// The built-in preset of that name; null if none.
PresetPtr find_preset(std::string_view name);
std::vector<std::string> preset_names();

// The profile a cell builds when the matrix names none; its cells carry no profile suffix.
inline constexpr std::string_view kDefaultProfile = "full";

// Environment variables fabuild sets from the matrix; a matrix `env:` may not set them.
struct ControlledEnv {
  std::string name;
  std::string instead;  // the matrix key that sets it
};
std::vector<ControlledEnv> controlled_env(const PackagePreset& preset);

}  // namespace fabuild
