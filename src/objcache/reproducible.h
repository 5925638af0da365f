#pragma once

// What makes two compiles of the same inputs differ, taken out of the object (docs/security.md,
// "Reproducible wheels"). nvcc compiles a .cu file through temporary files named
// tmpxft_<its pid, 8 hex>_<a counter, 8 hex>-..., and the host object keeps that name (its
// STT_FILE symbol, and its debug info's file name with -g): two compiles of one file differ in
// those digits and nothing else. fabuild-cc writes them as zeros, the same length, in the object
// the build links and the cache keeps. Nothing reads the name back: it names a file that is gone.

#include <cstddef>
#include <string>

namespace fabuild::objcache {

// Zeros for the hex digits of every "tmpxft_XXXXXXXX_XXXXXXXX" in `object`; how many it changed.
std::size_t pin_nvcc_temp_names(std::string& object);

}  // namespace fabuild::objcache
