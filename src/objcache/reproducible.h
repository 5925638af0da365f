#pragma once

// What makes two compiles of the same inputs differ, taken out of the object (docs/security.md,
// "Reproducible wheels"). nvcc compiles a .cu file through temporary files named
// tmpxft_<its pid, 8 hex>_<a counter, 8 hex>-..., and the host object keeps that name (its
// STT_FILE symbol, and its debug info's file name with -g): two compiles of one file differ in
// those digits and nothing else. fabuild-cc writes them as zeros, the same length, in the object
// the build links and the cache keeps. Nothing reads the name back: it names a file that is gone.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "util/expected.h"

namespace fabuild::objcache {

// Zeros for the hex digits of every "tmpxft_XXXXXXXX_XXXXXXXX" in `object`; how many it changed.
std::size_t pin_nvcc_temp_names(std::string& object);

// nvcc's front end names a unit's file-local symbols (anonymous namespaces, cuda::std's
// customization-point objects) after a module id, _INTERNAL_<path hash>_<n>_<file>_cu_<tail>. The
// tail names the unit's first external entity that has a definition of its own ("_Z1kPi", or a hash
// of it); a unit with none (one that only defines explicit specializations, as FlashAttention 2's
// kernel files do) gets <8 hex>_<nvcc's pid> instead, different at every compile (measured: 64
// strings of one FlashAttention 2 object, nothing else), and of a different length when the pids
// have a different number of digits. fabuild-cc gives every nvcc compile such an entity of its
// own, first: a hidden variable named after the compile (its source under the staging stand-in and
// its arguments, not its key: a strictly keyed compile's key names its directory), in a header it
// pre-includes. The id
// is then the same at every compile, in the host object and in the device code alike, PTX,
// compressed images and relocatable device code included (measured on a toy unit of that shape).
struct ModuleAnchor {
  static constexpr const char* kStandIn = "/fabuild-anchor";  // its directory, in debug information
  std::string name;    // fabuild_module_<16 hex of the seed>: one per compile, so a link has each once
  std::string header;  // the header that defines it
};
// `seed`: hex digits that name the compile the same wherever it runs (NormalForm::anchor_seed's
// digest; the compile's key where there is none).
ModuleAnchor module_anchor(const std::string& seed);
// The anchor's header, written into `dir` (made; a directory of this compile's alone): its path.
Expected<std::filesystem::path> write_module_anchor(const std::filesystem::path& dir, const std::string& seed);

}  // namespace fabuild::objcache
