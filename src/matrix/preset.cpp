#include "matrix/preset.h"

namespace fabuild {

namespace {

// A package built the way FlashAttention 2's setup.py builds: its archs and environment contract.
PackagePreset flash_attention_2_style(std::string name, std::string dist_name, std::string id_prefix, std::string extension) {
  return PackagePreset{
      .name = std::move(name),
      .dist_name = std::move(dist_name),
      .id_prefix = std::move(id_prefix),
      .extension = std::move(extension),
      .known_archs = {80, 90, 100, 110, 120},
      .default_archs = {80, 90, 100, 120},
      .archs_env = "FLASH_ATTN_CUDA_ARCHS",
      .force_build_env = "FLASH_ATTENTION_FORCE_BUILD",
      .local_version_env = "FLASH_ATTN_LOCAL_VERSION",
      .cxx11_abi_env = "FLASH_ATTENTION_FORCE_CXX11_ABI",
      .ignored_env = {{"TORCH_CUDA_ARCH_LIST", "it reads FLASH_ATTN_CUDA_ARCHS, which fabuild sets from `archs:`"}},
  };
}

const std::vector<PackagePreset>& presets() {
  static const std::vector<PackagePreset> all = {
      flash_attention_2_style("flash-attn", "flash_attn", "fa", "flash_attn_2_cuda"),
      // examples/flash_example: a small torch CUDA extension built exactly as FlashAttention 2 is,
      // for fast end-to-end runs and tests.
      flash_attention_2_style("flash-example", "flash_example", "example", "flash_example_cuda"),
  };
  return all;
}

}  // namespace

const PackagePreset* find_preset(std::string_view name) {
  for (const auto& p : presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.name);
  return names;
}

std::vector<ControlledEnv> controlled_env(const PackagePreset& preset) {
  return {
      {preset.archs_env, "archs"},
      {preset.force_build_env, "(always TRUE)"},
      {preset.local_version_env, "(the cell's label)"},
      {preset.cxx11_abi_env, "cxx11_abi"},
      {"MAX_JOBS", "build.max_jobs"},
      {"NVCC_THREADS", "build.nvcc_threads"},
      {"BUILD_TARGET", "(always cuda)"},
      {"CUDA_HOME", "cuda"},
  };
}

}  // namespace fabuild
