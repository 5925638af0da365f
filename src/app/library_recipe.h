#pragma once

// The library recipe (recipes/flash-attn-lib: a CMake project, its C API and test program;
// docs/library.md) as `artifact: library` cells configure it. fabuild carries the recipe of its
// own build (CMakeLists.txt, fabuild_recipe_blob) and writes it once into its cache, under a name
// made of its content, so that a cell never builds another recipe than the one it was made for.

#include <filesystem>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/files.h"

namespace fabuild {

// The C API: every function libflash_attn exports, and nothing else (include/flash_attn/flash_attn.h).
// Every flavour and profile exports all of them: a call a build lacks returns FLASH_ATTN_NOT_BUILT.
inline const std::vector<std::string> kLibraryExports = {
    "flash_attn_api_version", "flash_attn_build_info", "flash_attn_capabilities", "flash_attn_last_error",
    "flash_attn_supports",    "flash_attn_varlen_bwd", "flash_attn_varlen_fwd",   "flash_attn_varlen_fwd_num_splits"};

// <cache_root>/recipes/flash-attn-lib-<digest>, written when missing (through `files`, the
// System's; source/archive.h unpacks it); a Failure when it cannot be.
Expected<std::filesystem::path> install_library_recipe(Files& files, const std::filesystem::path& cache_root);

}  // namespace fabuild
