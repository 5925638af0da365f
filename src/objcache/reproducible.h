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

// nvcc's front end names a unit's file-local symbols after a module id,
// _INTERNAL_<path hash>_<n>_<file>_cu_<tail>. When the unit's first external entity can name it
// (a __global__ function: "_Z1kPi") the tail is that name; when it cannot (a unit that only
// defines explicit specializations, as FlashAttention 2's kernel files do) the tail is
// <8 hex>_<nvcc's pid>: two compiles of one file in one directory then differ in it (measured:
// 64 strings of one FlashAttention 2 object, nothing else). fabuild-cc writes such a tail from a
// hash of the rest of the id instead, the same length, in every place the object has it. Only
// for whole-program compiles: with relocatable device code (-rdc, -dc) the id is also in the
// device code, which nvcc may have compressed, and a host-only rewrite would part them.
// How many places it changed.
std::size_t pin_nvcc_module_ids(std::string& object);

}  // namespace fabuild::objcache
