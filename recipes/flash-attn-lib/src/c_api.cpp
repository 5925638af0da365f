// The C API's entry points: argument checks and error reporting shared by every flavour; the
// kernels are reached through the flavour's backend (backend.h).

#include <cmath>
#include <cstdint>
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

namespace {

// The current device's compute capability and SM count. Three attributes, not
// cudaGetDeviceProperties: that one reads every property, which costs more than a short pass.
struct Device {
  int cc = 0;
  int sm_count = 0;
};
flash_attn_status current_device(Device& out) {
  int device = 0, major = 0, minor = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return cuda_failed(e, "cudaGetDevice");
  for (auto [value, attribute] :
       {std::pair{&major, cudaDevAttrComputeCapabilityMajor}, std::pair{&minor, cudaDevAttrComputeCapabilityMinor},
        std::pair{&out.sm_count, cudaDevAttrMultiProcessorCount}}) {
    if (cudaError_t e = cudaDeviceGetAttribute(value, attribute, device); e != cudaSuccess) {
      return cuda_failed(e, "cudaDeviceGetAttribute");
    }
  }
  out.cc = major * 10 + minor;
  return FLASH_ATTN_OK;
}

// The checks the forward and backward passes share: sizes, heads, head dim, dtype.
flash_attn_status check_shape(flash_attn_dtype dtype, int batch, int total_q, int max_seqlen_q, int max_seqlen_k,
                              int num_heads, int num_heads_k, int head_dim) {
  if (batch <= 0 || total_q < 0 || max_seqlen_q < 0 || max_seqlen_k < 0) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "batch must be positive and the totals and maximum lengths not negative");
  }
  if (num_heads <= 0 || num_heads_k <= 0 || num_heads % num_heads_k != 0) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "num_heads (" + std::to_string(num_heads) +
                                                 ") must be a positive multiple of num_heads_k (" +
                                                 std::to_string(num_heads_k) + ")");
  }
  const int alignment = dtype == FLASH_ATTN_E4M3 ? 16 : 8;
  if (head_dim <= 0 || head_dim % alignment != 0) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "head_dim (" + std::to_string(head_dim) +
                                                 ") must be a positive multiple of " + std::to_string(alignment));
  }
  if (dtype != FLASH_ATTN_FP16 && dtype != FLASH_ATTN_BF16 && dtype != FLASH_ATTN_E4M3) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "dtype " + std::to_string(static_cast<int>(dtype)) + " is unknown");
  }
  return FLASH_ATTN_OK;
}

// A variant this build lacks: the built-in profiles of the flavour that have it, or that none does.
flash_attn_status not_built(const char* what, int capability) {
  const std::string profiles = profiles_with(capability);
  return fail(FLASH_ATTN_NOT_BUILT,
              std::string("this build has no ") + what + " (" + FLASH_ATTN_BUILD_INFO + "): " +
                  (profiles.empty() ? std::string("no profile of this package has it")
                                    : "build a profile that has it (" + profiles + ", docs/library.md)"));
}

flash_attn_status no_kernel(flash_attn_dtype dtype, int head_dim, int cc) {
  return fail(FLASH_ATTN_NOT_BUILT, "this build has no kernel for dtype " + std::to_string(static_cast<int>(dtype)) +
                                        ", head_dim " + std::to_string(head_dim) + " on compute capability " +
                                        std::to_string(cc) + " (" + FLASH_ATTN_BUILD_INFO + ")");
}

// The paged-cache and split-KV fields of a forward call.
flash_attn_status check_variants(const flash_attn_varlen_fwd_args& a) {
  if (a.num_splits < 0 || a.num_splits > 256) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "num_splits (" + std::to_string(a.num_splits) +
                                                 ") must be 0 to 256 (0: the library's choice, 1: no split)");
  }
  if (a.num_splits > 1 && (capabilities() & FLASH_ATTN_CAP_SPLIT_KV) == 0)
    return not_built("split-KV (num_splits > 1)", FLASH_ATTN_CAP_SPLIT_KV);
  if (a.block_table == nullptr) {
    if (a.cu_seqlens_k == nullptr)
      return fail(FLASH_ATTN_INVALID_ARGUMENT, "cu_seqlens_k is required without a block_table");
    if (a.total_k < 0) return fail(FLASH_ATTN_INVALID_ARGUMENT, "total_k must not be negative");
    if (a.total_k == 0 && a.total_q > 0) {
      return fail(FLASH_ATTN_INVALID_ARGUMENT, "total_k is 0: the queries have no keys to attend to");
    }
    return FLASH_ATTN_OK;
  }
  if (a.seqused_k == nullptr) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "a paged KV cache (block_table) needs seqused_k, the cache's lengths");
  }
  if (a.page_size <= 0 || a.max_blocks_per_seq <= 0 || a.num_blocks <= 0) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT,
                "a paged KV cache needs page_size, max_blocks_per_seq and num_blocks positive");
  }
  if (int64_t(a.max_seqlen_k) > int64_t(a.max_blocks_per_seq) * a.page_size) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "max_seqlen_k (" + std::to_string(a.max_seqlen_k) +
                                                 ") exceeds max_blocks_per_seq * page_size (" +
                                                 std::to_string(int64_t(a.max_blocks_per_seq) * a.page_size) + ")");
  }
  if ((capabilities() & FLASH_ATTN_CAP_PAGED_KV) == 0)
    return not_built("paged KV cache (block_table)", FLASH_ATTN_CAP_PAGED_KV);
  return FLASH_ATTN_OK;
}

// Every check of a forward call before its kernels: the arguments, the device, a kernel for them.
// Clears the last error first.
flash_attn_status check_forward(const flash_attn_varlen_fwd_args* args, Device& device) {
  g_last_error.clear();
  if (args == nullptr) return fail(FLASH_ATTN_INVALID_ARGUMENT, "args is NULL");
  const flash_attn_varlen_fwd_args& a = *args;
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.out == nullptr || a.softmax_lse == nullptr ||
      a.cu_seqlens_q == nullptr) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "q, k, v, out, softmax_lse and cu_seqlens_q are required");
  }
  if (flash_attn_status s = check_shape(a.dtype, a.batch, a.total_q, a.max_seqlen_q, a.max_seqlen_k, a.num_heads,
                                        a.num_heads_k, a.head_dim);
      s != FLASH_ATTN_OK) {
    return s;
  }
  if (flash_attn_status s = check_variants(a); s != FLASH_ATTN_OK) return s;
  if (flash_attn_status s = current_device(device); s != FLASH_ATTN_OK) return s;
  if (!supports(a.dtype, a.head_dim, device.cc)) return no_kernel(a.dtype, a.head_dim, device.cc);
  return FLASH_ATTN_OK;
}

Launch forward_launch(const flash_attn_varlen_fwd_args& a, cudaStream_t stream, const Device& device) {
  return Launch{a, stream, device.cc, device.sm_count,
                a.softmax_scale > 0 ? a.softmax_scale : 1.0f / std::sqrt(float(a.head_dim))};
}

}  // namespace

}  // namespace flash_attn_lib

using flash_attn_lib::fail;

extern "C" {

flash_attn_status flash_attn_varlen_fwd(const flash_attn_varlen_fwd_args* args, cudaStream_t stream) {
  using namespace flash_attn_lib;
  Device device;
  if (flash_attn_status s = check_forward(args, device); s != FLASH_ATTN_OK) return s;
  const Launch launch = forward_launch(*args, stream, device);
  if (args->total_q == 0) return FLASH_ATTN_OK;
  // The kernels' launch code reports a failed CUDA call by throwing (shim/c10/cuda/CUDAException.h,
  // as torch's does); no exception may cross the C API.
  try {
    return varlen_fwd(launch);
  } catch (const std::exception& e) {
    return fail(FLASH_ATTN_CUDA_ERROR, e.what());
  }
}

int flash_attn_varlen_fwd_num_splits(const flash_attn_varlen_fwd_args* args) {
  using namespace flash_attn_lib;
  Device device;
  if (check_forward(args, device) != FLASH_ATTN_OK) return -1;
  return num_splits(forward_launch(*args, nullptr, device));
}

flash_attn_status flash_attn_varlen_bwd(const flash_attn_varlen_bwd_args* args, cudaStream_t stream) {
  using namespace flash_attn_lib;
  g_last_error.clear();
  if (args == nullptr) return fail(FLASH_ATTN_INVALID_ARGUMENT, "args is NULL");
  const flash_attn_varlen_bwd_args& a = *args;
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.out == nullptr || a.dout == nullptr ||
      a.softmax_lse == nullptr || a.dq == nullptr || a.dk == nullptr || a.dv == nullptr || a.cu_seqlens_q == nullptr ||
      a.cu_seqlens_k == nullptr) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT,
                "q, k, v, out, dout, softmax_lse, dq, dk, dv, cu_seqlens_q and cu_seqlens_k are required");
  }
  if (flash_attn_status s = check_shape(a.dtype, a.batch, a.total_q, a.max_seqlen_q, a.max_seqlen_k, a.num_heads,
                                        a.num_heads_k, a.head_dim);
      s != FLASH_ATTN_OK) {
    return s;
  }
  if (a.total_k < 0) return fail(FLASH_ATTN_INVALID_ARGUMENT, "total_k must not be negative");
  if (a.dtype == FLASH_ATTN_E4M3) return fail(FLASH_ATTN_INVALID_ARGUMENT, "the backward pass takes fp16 or bf16");
  if ((capabilities() & FLASH_ATTN_CAP_BACKWARD) == 0) return not_built("backward pass", FLASH_ATTN_CAP_BACKWARD);
  Device device;
  if (flash_attn_status s = current_device(device); s != FLASH_ATTN_OK) return s;
  if (!supports(a.dtype, a.head_dim, device.cc)) return no_kernel(a.dtype, a.head_dim, device.cc);
  BwdLaunch launch{a, stream, device.cc, device.sm_count,
                   a.softmax_scale > 0 ? a.softmax_scale : 1.0f / std::sqrt(float(a.head_dim))};
  // No queries or no keys: no attention, so no gradient (mha_bwd zeroes them likewise).
  if (a.total_q == 0 || a.total_k == 0) {
    const size_t q_bytes = size_t(2) * a.total_q * a.num_heads * a.head_dim;
    const size_t k_bytes = size_t(2) * a.total_k * a.num_heads_k * a.head_dim;
    for (auto [p, bytes] : {std::pair{a.dq, q_bytes}, std::pair{a.dk, k_bytes}, std::pair{a.dv, k_bytes}}) {
      if (cudaError_t e = cudaMemsetAsync(p, 0, bytes, stream); e != cudaSuccess)
        return cuda_failed(e, "cudaMemsetAsync");
    }
    return FLASH_ATTN_OK;
  }
#ifdef FLASHATTENTION_DISABLE_BACKWARD
  (void)launch;
  return not_built("backward pass", FLASH_ATTN_CAP_BACKWARD);  // and no backend_<flavour>_bwd.cpp in the build
#else
  try {
    return varlen_bwd(launch);
  } catch (const std::exception& e) {
    return fail(FLASH_ATTN_CUDA_ERROR, e.what());
  }
#endif
}

const char* flash_attn_last_error(void) { return flash_attn_lib::g_last_error.c_str(); }

const char* flash_attn_build_info(void) { return FLASH_ATTN_BUILD_INFO; }

int flash_attn_supports(flash_attn_dtype dtype, int head_dim, int compute_capability) {
  return flash_attn_lib::supports(dtype, head_dim, compute_capability) ? 1 : 0;
}

int flash_attn_capabilities(void) { return flash_attn_lib::capabilities(); }

int flash_attn_api_version(void) { return FLASH_ATTN_API_VERSION; }

}  // extern "C"
