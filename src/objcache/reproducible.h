#pragma once

// What makes two compiles of the same inputs differ, taken out of the object (docs/security.md,
// "Reproducible wheels"). nvcc compiles a .cu file through temporary files named
// tmpxft_<its pid, 8 hex>_<a counter, 8 hex>-..., and the host object keeps that name (its
// STT_FILE symbol, and its debug info's file name with -g): two compiles of one file differ in
// those digits and nothing else. fabuild-cc writes them as zeros, the same length, in the object
// the build links and the cache keeps. Nothing reads the name back: it names a file that is gone.

#include <cstddef>
#include <string>
#include <vector>

namespace fabuild::objcache {

// Zeros for the hex digits of every "tmpxft_XXXXXXXX_XXXXXXXX" in `object`; how many it changed.
std::size_t pin_nvcc_temp_names(std::string& object);

// nvcc's front end names a unit's file-local symbols after a module id,
// _INTERNAL_<path hash>_<n>_<file>_cu_<tail>. When the unit's first external entity can name it
// (a __global__ function: "_Z1kPi") the tail is that name; when it cannot (a unit that only
// defines explicit specializations, as FlashAttention 2's kernel files do) the tail is
// <8 hex>_<nvcc's pid>: two compiles of one file in one directory then differ in it (measured:
// 64 strings of one FlashAttention 2 object, nothing else). fabuild-cc writes such a tail from a
// hash of the rest of the id instead, the same length, in every place the object has it: the
// host's symbols and the names it registers device variables by, and the same names in the
// device code's ELF images, which the fat binary keeps as they are. How many places it changed.
std::size_t pin_nvcc_module_ids(std::string& object);

// Whether an nvcc command's module ids may be pinned: only when every image its fat binary holds
// is SASS, which fatbinary stores uncompressed (its --compress defaults to PTX and debug images).
// Not with PTX (-gencode code=compute_XX, -arch=sm_XX without -code, no arch given), device
// debug information (-G), compression asked for (-Xfatbin, --compress-mode), or relocatable
// device code (-rdc, -dc): there the id is also in compressed device code, which a rewrite of
// the rest would part from it.
bool module_ids_pinnable(const std::vector<std::string>& args);

}  // namespace fabuild::objcache
