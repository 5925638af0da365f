#pragma once

// How many translation units a FlashAttention 3 build compiles with a profile's switches off,
// counted from the source: the files of hopper/instantiations/ that hopper/setup.py (3.0.0)
// would hand to the compiler (its product of head dims, dtypes, split, paged KV, softcap and
// pack-GQA, forward and backward, sm_90 and sm_80, less what each FLASH_ATTENTION_DISABLE_<X>
// turns off) and that exist in this source, plus its API and scheduler sources. The plan shows
// it with --dry-run -v, so that "minimal" is seen to be 6 units before hours are spent.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fabuild {

struct KernelUnits {
  std::size_t kernels = 0;          // instantiation files compiled
  std::size_t total = 0;            // kernels plus flash_api*.cpp, flash_prepare_scheduler.cu, flash_fwd_combine.cu
  std::size_t available = 0;        // instantiation files in the source
  std::vector<std::string> others;  // a library's units beside its kernels: "the C API", ...
};

// `hopper` is the directory of FlashAttention 3's setup.py; `off` the switches turned off
// (BACKWARD, SPLIT, HDIM96, ...). nullopt when it has no instantiations/ directory.
std::optional<KernelUnits> count_hopper_units(const std::filesystem::path& hopper, const std::vector<std::string>& off);

// How many translation units the library recipe (recipes/flash-attn-lib, cmake/flavours.cmake)
// compiles from the source tree `root` as `flavour` (fa3: hopper/ of FlashAttention 3, fa2:
// csrc/flash_attn of FlashAttention 2, example; the package's, never guessed from the tree): the
// kernel files of the variants the library uses (forward; paged, split and backward) that the
// switches `off` and the archs leave, plus its other sources (`others`). `available` counts the
// flavour's files of those variants. nullopt when `root` has none of them.
// tests/e2e/library_build.sh holds it to the recipe's own count.
std::optional<KernelUnits> count_library_units(const std::filesystem::path& root, const std::string& flavour,
                                               const std::vector<std::string>& off, const std::vector<int>& archs);

}  // namespace fabuild
