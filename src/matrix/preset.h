#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "matrix/values.h"

namespace fabuild {

// What fabuild knows about one buildable package: its names, the archs its build knows, and
// the environment variables its setup.py reads (DESIGN.md, "Facts about the thing being built").
struct PackagePreset {
  std::string name;          // as in the matrix file and on PyPI: "flash-attn"
  std::string dist_name;     // wheel file prefix: "flash_attn"
  std::string id_prefix;     // cell ids and wheelhouse directories: "fa" -> fa2.8.3
  std::string extension;     // its compiled module, imported to smoke-test a wheel: "flash_attn_2_cuda"
  ArchList known_archs;      // archs its setup.py turns into -gencode flags; others are ignored
  ArchList default_archs;    // its setup.py default, used when the matrix names none
  // Environment contract.
  std::string archs_env;         // FLASH_ATTN_CUDA_ARCHS
  std::string force_build_env;   // FLASH_ATTENTION_FORCE_BUILD (else it downloads a guessed wheel)
  std::string local_version_env; // FLASH_ATTN_LOCAL_VERSION
  std::string cxx11_abi_env;     // FLASH_ATTENTION_FORCE_CXX11_ABI
  // Variables people set for this package that it never reads, with what to do instead.
  struct IgnoredEnv {
    std::string name;
    std::string advice;
  };
  std::vector<IgnoredEnv> ignored_env;
};

const PackagePreset* find_preset(std::string_view name);
std::vector<std::string> preset_names();

// Environment variables fabuild sets from the matrix; a matrix `env:` may not set them.
struct ControlledEnv {
  std::string name;
  std::string instead;  // the matrix key that sets it
};
std::vector<ControlledEnv> controlled_env(const PackagePreset& preset);

}  // namespace fabuild
