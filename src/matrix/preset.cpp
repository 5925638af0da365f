#include "matrix/preset.h"

namespace fabuild {

namespace {

const std::vector<PackagePreset>& presets() {
  static const std::vector<PackagePreset> all = {
      PackagePreset{
          .name = "flash-attn",
          .dist_name = "flash_attn",
          .id_prefix = "fa",
          .extension = "flash_attn_2_cuda",
          .known_archs = {80, 90, 100, 110, 120},
          .default_archs = {80, 90, 100, 120},
          .archs_env = "FLASH_ATTN_CUDA_ARCHS",
          .force_build_env = "FLASH_ATTENTION_FORCE_BUILD",
          .local_version_env = "FLASH_ATTN_LOCAL_VERSION",
          .cxx11_abi_env = "FLASH_ATTENTION_FORCE_CXX11_ABI",
          .ignored_env = {{"TORCH_CUDA_ARCH_LIST",
                           "FlashAttention 2 reads FLASH_ATTN_CUDA_ARCHS, which fabuild sets from `archs:`"}},
      },
      // examples/flash_example: a small torch CUDA extension built exactly as FlashAttention 2 is,
      // for fast end-to-end runs and tests.
      PackagePreset{
          .name = "flash-example",
          .dist_name = "flash_example",
          .id_prefix = "example",
          .extension = "flash_example_cuda",
          .known_archs = {80, 90, 100, 110, 120},
          .default_archs = {80, 90, 100, 120},
          .archs_env = "FLASH_ATTN_CUDA_ARCHS",
          .force_build_env = "FLASH_ATTENTION_FORCE_BUILD",
          .local_version_env = "FLASH_ATTN_LOCAL_VERSION",
          .cxx11_abi_env = "FLASH_ATTENTION_FORCE_CXX11_ABI",
          .ignored_env = {{"TORCH_CUDA_ARCH_LIST", "it reads FLASH_ATTN_CUDA_ARCHS, which fabuild sets from `archs:`"}},
      },
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
