#pragma once

// The pieces of the matrix loader, one per part of the file (loader.cpp, loader_axes.cpp,
// loader_entries.cpp, loader_compat.cpp). Internal to the matrix layer.

#include <yaml-cpp/yaml.h>

#include "matrix/spec.h"
#include "matrix/yaml_read.h"

namespace fabuild::loader {

// Axes (loader_axes.cpp).
Located<Version> read_fa_version(const yaml::Reader& r, const YAML::Node& node);
// A series, a pin, or a range (">=2.10", ">=2.10,<2.14": matrix/torch_range.h).
struct TorchEntry {
  Version series;                   // a series or pin; a range's floor
  std::optional<TorchRange> range;  // a range
  [[nodiscard]] std::string str() const { return range ? range->str() : series.str(); }
};
Located<TorchEntry> read_torch(const yaml::Reader& r, const YAML::Node& node);
Located<GpuSet> read_cuda_set(const yaml::Reader& r, const YAML::Node& node);
Located<PythonTag> read_python(const yaml::Reader& r, const YAML::Node& node);
Located<Platform> read_platform(const yaml::Reader& r, const YAML::Node& node);
Located<Artifact> read_artifact(const yaml::Reader& r, const YAML::Node& node);
Located<Abi> read_abi(const yaml::Reader& r, const YAML::Node& node);
Located<ArchList> read_archs(const yaml::Reader& r, const YAML::Node& node, const PackagePreset& preset,
                             const std::string& what);
ArchSetting read_arch_setting(const yaml::Reader& r, const YAML::Node& node, const PackagePreset& preset);
Provision read_provision(const yaml::Reader& r, const YAML::Node& node);
ToolkitSource read_toolkit_source(const yaml::Reader& r, const YAML::Node& node);

// Settings (loader_entries.cpp).
BuildSettings read_build(const yaml::Reader& r, const YAML::Node& node, const std::string& what);
BudgetSpec read_budget(const yaml::Reader& r, const YAML::Node& node);
std::map<std::string, std::string> read_env(const yaml::Reader& r, const YAML::Node& node, const PackagePreset& preset,
                                            const std::string& what);
std::vector<std::string> read_command(const yaml::Reader& r, const YAML::Node& node, const std::string& what);
std::vector<MatrixEntry> read_entries(const yaml::Reader& r, const YAML::Node& node, bool include,
                                      const PackagePreset& preset);

// `source:` (loader_entries.cpp).
SourceSpec read_source(const yaml::Reader& r, const YAML::Node& node);

// `package:`, `rocm:`, `rocm_archs:`, `profile:`, `profiles:`, `patches:` (loader_package.cpp).
PresetPtr read_package(const yaml::Reader& r, const YAML::Node& node);
// `naming:` upstream (the package's own wheel names), fabuild (the default) or a label.
PresetPtr apply_naming(const yaml::Reader& r, const YAML::Node& node, PresetPtr package);
// `platform_tag:` linux (the default) or a manylinux policy, "manylinux_2_28" (PEP 600).
PresetPtr apply_platform_tag(const yaml::Reader& r, const YAML::Node& node, PresetPtr package);
Located<GpuSet> read_rocm_set(const yaml::Reader& r, const YAML::Node& node);
std::vector<std::string> read_rocm_archs(const yaml::Reader& r, const YAML::Node& node, const PackagePreset& preset);
Located<std::string> read_profile(const yaml::Reader& r, const YAML::Node& node);
std::map<std::string, ProfileDef> read_profile_defs(const yaml::Reader& r, const YAML::Node& node);
std::vector<PatchRule> read_patches(const yaml::Reader& r, const YAML::Node& node);
// A source for this package: `source: pip` needs its sdist on PyPI, a git source a ref (the
// package's default tag when the matrix names none).
void check_source(const yaml::Reader& r, const YAML::Node& node, SourceSpec& source, const PackagePreset& preset);

// `ci:` (loader_ci.cpp).
CiSpec read_ci(const yaml::Reader& r, const YAML::Node& node);

// `cache:` (loader_cache.cpp).
CacheSpec read_cache(const yaml::Reader& r, const YAML::Node& node);

// `container:` (loader_container.cpp).
ContainerSpec read_container(const yaml::Reader& r, const YAML::Node& node);

// `compat:` overrides, applied onto `tables` (loader_compat.cpp).
void read_compat(const yaml::Reader& r, const YAML::Node& node, CompatTables& tables, const PackagePreset& preset);

}  // namespace fabuild::loader
