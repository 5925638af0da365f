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
  std::size_t kernels = 0;    // instantiation files compiled
  std::size_t total = 0;      // kernels plus flash_api*.cpp, flash_prepare_scheduler.cu, flash_fwd_combine.cu
  std::size_t available = 0;  // instantiation files in the source
};

// `hopper` is the directory of FlashAttention 3's setup.py; `off` the switches turned off
// (BACKWARD, SPLIT, HDIM96, ...). nullopt when it has no instantiations/ directory.
std::optional<KernelUnits> count_hopper_units(const std::filesystem::path& hopper, const std::vector<std::string>& off);

}  // namespace fabuild
