// The C API's entry points: argument checks and error reporting shared by every flavour; the
// kernels are reached through the flavour's backend (backend.h).

#include <cmath>
#include <exception>
#include <string>
#include <utility>

#include "backend.h"
#include "flash_attn/flash_attn.h"

namespace flash_attn_lib {

namespace {

thread_local std::string g_last_error;

}  // namespace

flash_attn_status fail(flash_attn_status status, const std::string& why) {
  g_last_error = why;
  return status;
}

flash_attn_status cuda_failed(cudaError_t error, const char* what) {
  return fail(FLASH_ATTN_CUDA_ERROR, std::string(what) + ": " + cudaGetErrorString(error));
}

bool runs_on(int cc) {
  for (const int arch : {FLASH_ATTN_LIB_ARCHS}) {
    if (arch / 10 == cc / 10 && arch <= cc) return true;
  }
  return false;
}

}  // namespace flash_attn_lib

using flash_attn_lib::fail;

extern "C" {

flash_attn_status flash_attn_varlen_fwd(const flash_attn_varlen_fwd_args* args, cudaStream_t stream) {
  flash_attn_lib::g_last_error.clear();
  if (args == nullptr) return fail(FLASH_ATTN_INVALID_ARGUMENT, "args is NULL");
  const flash_attn_varlen_fwd_args& a = *args;
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.out == nullptr || a.softmax_lse == nullptr ||
      a.cu_seqlens_q == nullptr || a.cu_seqlens_k == nullptr) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "q, k, v, out, softmax_lse, cu_seqlens_q and cu_seqlens_k are required");
  }
  if (a.batch <= 0 || a.total_q < 0 || a.total_k < 0 || a.max_seqlen_q < 0 || a.max_seqlen_k < 0) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "batch must be positive and the totals and maximum lengths not negative");
  }
  if (a.total_k == 0 && a.total_q > 0) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "total_k is 0: the queries have no keys to attend to");
  }
  if (a.num_heads <= 0 || a.num_heads_k <= 0 || a.num_heads % a.num_heads_k != 0) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "num_heads (" + std::to_string(a.num_heads) +
                                                 ") must be a positive multiple of num_heads_k (" +
                                                 std::to_string(a.num_heads_k) + ")");
  }
  const int alignment = a.dtype == FLASH_ATTN_E4M3 ? 16 : 8;
  if (a.head_dim <= 0 || a.head_dim % alignment != 0) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "head_dim (" + std::to_string(a.head_dim) +
                                                 ") must be a positive multiple of " + std::to_string(alignment));
  }
  if (a.dtype != FLASH_ATTN_FP16 && a.dtype != FLASH_ATTN_BF16 && a.dtype != FLASH_ATTN_E4M3) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "dtype " + std::to_string(static_cast<int>(a.dtype)) + " is unknown");
  }
  // Three attributes, not cudaGetDeviceProperties: that one reads every property, which costs
  // more than a short forward pass.
  int device = 0, major = 0, minor = 0, sm_count = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return flash_attn_lib::cuda_failed(e, "cudaGetDevice");
  for (auto [value, attribute] :
       {std::pair{&major, cudaDevAttrComputeCapabilityMajor}, std::pair{&minor, cudaDevAttrComputeCapabilityMinor},
        std::pair{&sm_count, cudaDevAttrMultiProcessorCount}}) {
    if (cudaError_t e = cudaDeviceGetAttribute(value, attribute, device); e != cudaSuccess) {
      return flash_attn_lib::cuda_failed(e, "cudaDeviceGetAttribute");
    }
  }
  const int cc = major * 10 + minor;
  if (!flash_attn_lib::supports(a.dtype, a.head_dim, cc)) {
    return fail(FLASH_ATTN_NOT_BUILT, "this build has no kernel for dtype " +
                                          std::to_string(static_cast<int>(a.dtype)) + ", head_dim " +
                                          std::to_string(a.head_dim) + " on compute capability " + std::to_string(cc) +
                                          " (" + flash_attn_build_info() + ")");
  }
  flash_attn_lib::Launch launch{a, stream, cc, sm_count,
                                a.softmax_scale > 0 ? a.softmax_scale : 1.0f / std::sqrt(float(a.head_dim))};
  if (a.total_q == 0) return FLASH_ATTN_OK;
  // The kernels' launch code reports a failed CUDA call by throwing (shim/c10/cuda/CUDAException.h,
  // as torch's does); no exception may cross the C API.
  try {
    return flash_attn_lib::varlen_fwd(launch);
  } catch (const std::exception& e) {
    return fail(FLASH_ATTN_CUDA_ERROR, e.what());
  }
}

const char* flash_attn_last_error(void) { return flash_attn_lib::g_last_error.c_str(); }

const char* flash_attn_build_info(void) { return FLASH_ATTN_BUILD_INFO; }

int flash_attn_supports(flash_attn_dtype dtype, int head_dim, int compute_capability) {
  return flash_attn_lib::supports(dtype, head_dim, compute_capability) ? 1 : 0;
}

}  // extern "C"
