// What each flavour of the library (FlashAttention 3's hopper/, FlashAttention 2's csrc/flash_attn,
// the bundled example) provides to the C API in c_api.cpp, and the helpers it may use. One
// backend is linked into a build.
#pragma once

#include <string>

#include "flash_attn/flash_attn.h"

namespace flash_attn_lib {

// A checked call: the arguments are valid and this build has a kernel for them.
struct Launch {
  const flash_attn_varlen_fwd_args& args;
  cudaStream_t stream;
  int compute_capability;  // major * 10 + minor of the current device
  int num_sm;
  float softmax_scale;  // resolved: args' or 1/sqrt(head_dim)
};

// A checked backward call, as Launch.
struct BwdLaunch {
  const flash_attn_varlen_bwd_args& args;
  cudaStream_t stream;
  int compute_capability;
  int num_sm;
  float softmax_scale;
};

// The backend's: whether it compiled a kernel for these, the capabilities its profile left
// (FLASH_ATTN_CAP_*), and the passes themselves. varlen_fwd is called with a paged cache or
// num_splits > 1 only when capabilities() has them; varlen_bwd only with FLASH_ATTN_CAP_BACKWARD.
bool supports(flash_attn_dtype dtype, int head_dim, int compute_capability);
int capabilities();
// The flavour's built-in profiles (docs/library.md) that have `capability` (one FLASH_ATTN_CAP_*),
// as a refusal names them: "inference or full", "full"; "" where no profile of the flavour has it.
const char* profiles_with(int capability);
flash_attn_status varlen_fwd(const Launch& launch);
// The parts varlen_fwd splits the keys into for this call: args.num_splits where it is above 0 (1
// where the build has no split-KV: the C API refused more), else the flavour's own choice.
int num_splits(const Launch& launch);
flash_attn_status varlen_bwd(const BwdLaunch& launch);

// Records `why` as flash_attn_last_error() and returns `status`.
flash_attn_status fail(flash_attn_status status, const std::string& why);
flash_attn_status cuda_failed(cudaError_t error, const char* what);

// Whether the build has machine code a GPU of compute capability `cc` runs: code for sm_XY runs
// on a GPU of the same major and a minor at least Y (FLASH_ATTN_LIB_ARCHS, from the build's archs).
bool runs_on(int cc);

}  // namespace flash_attn_lib
