// The FlashAttention 2 backend's forward pass: csrc/flash_attn's forward kernels
// (Flash_fwd_params, run_mha_fwd_, run_mha_fwd_splitkv_dispatch) reached without torch, with the
// parameters flash_api.cpp's mha_varlen_fwd sets for a forward pass without dropout, ALiBi,
// softcap or a sliding window; a paged KV cache runs the split-KV kernel with one split, as
// there. Its varlen forward pass has no split-KV (mha_varlen_fwd refuses num_splits > 1 and its
// combine kernel writes fixed-length rows): capabilities() says so. The kernels write +INFINITY
// as the LSE of a row that sees no key; the C API's -INFINITY replaces it after them (and the
// backward pass turns it back for its kernels, backend_fa2_bwd.cpp). torch's headers that the
// kernels include are stood in for by shim/ (the Philox state, CUDA checks). The backward pass
// is backend_fa2_bwd.cpp.

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include <cutlass/numeric_types.h>

#include "backend.h"
#include "built.h"
#include "flash.h"
#include "lse_rows.h"

namespace flash_attn_lib {

namespace {

using FLASH_NAMESPACE::Flash_fwd_params;
using FLASH_NAMESPACE::run_mha_fwd_;
using FLASH_NAMESPACE::run_mha_fwd_splitkv_dispatch;

using Built = HeadDims<32, 64, 96, 128, 192, 256>;

int round_multiple(int x, int m) { return (x + m - 1) / m * m; }

// A kernel of head dim D serves any head dim up to D (its loads are bounded by params.d), unless
// UNEVEN_K is off: then only D itself.
int kernel_head_dim(int head_dim) {
  const int rounded = Built::round_up(head_dim);
#ifdef FLASHATTENTION_DISABLE_UNEVEN_K
  return rounded == head_dim ? rounded : 0;
#else
  return rounded;
#endif
}

bool run(Flash_fwd_params& params, flash_attn_dtype dtype, int kernel_dim, cudaStream_t stream) {
  const bool paged = params.block_table != nullptr;
  return dispatch_16bit<cutlass::half_t, cutlass::bfloat16_t>(dtype, [&](auto t) {
    return dispatch_causal(params.is_causal, [&](auto causal) {
      return Built::dispatch(kernel_dim, [&](auto d) {
        using T = typename decltype(t)::type;
        constexpr int kDim = decltype(d)::value;
        constexpr bool kCausal = decltype(causal)::value;
        if constexpr (kPagedBuilt) {
          if (paged) return run_mha_fwd_splitkv_dispatch<T, kDim, kCausal>(params, stream);
        }
        run_mha_fwd_<T, kDim, kCausal>(params, stream);
      });
    });
  });
}

}  // namespace

int capabilities() {
  return (kPagedBuilt ? FLASH_ATTN_CAP_PAGED_KV : 0) | (kBackwardBuilt ? FLASH_ATTN_CAP_BACKWARD : 0);
}

// No profile has split-KV: the varlen forward pass has none (above).
const char* profiles_with(int capability) {
  return capability == FLASH_ATTN_CAP_PAGED_KV   ? "inference or full"
         : capability == FLASH_ATTN_CAP_BACKWARD ? "full"
                                                 : "";
}

// One pass: mha_varlen_fwd splits only a decoding batch whose query heads it folds into a
// fixed-length one (seqlenq_ngroups_swapped), which this library does not do.
int num_splits(const Launch&) { return 1; }

bool supports(flash_attn_dtype dtype, int head_dim, int cc) {
  if (dtype == FLASH_ATTN_FP16 && !kFp16Built) return false;
  return cc >= 80 && runs_on(cc) && dtype != FLASH_ATTN_E4M3 && kernel_head_dim(head_dim) != 0;
}

flash_attn_status varlen_fwd(const Launch& launch) {
  const flash_attn_varlen_fwd_args& a = launch.args;
#ifdef FLASHATTENTION_DISABLE_CAUSAL
  if (a.causal != 0 && a.max_seqlen_q > 1) return fail(FLASH_ATTN_NOT_BUILT, "this build has no causal kernels");
#endif
  if (a.max_seqlen_k == 0) return fail(FLASH_ATTN_INVALID_ARGUMENT, "max_seqlen_k is 0 while there are queries");
  if (a.num_splits > 1) {
    return fail(FLASH_ATTN_NOT_BUILT, "FlashAttention 2 has no split-KV for the varlen forward pass (num_splits " +
                                          std::to_string(a.num_splits) + "): pass 0 or 1");
  }
  const bool paged = a.block_table != nullptr;
  if (paged && a.page_size % 256 != 0) {
    return fail(
        FLASH_ATTN_INVALID_ARGUMENT,
        "FlashAttention 2's paged KV cache needs page_size a multiple of 256, not " + std::to_string(a.page_size));
  }
  Flash_fwd_params params{};
  params.is_bf16 = a.dtype == FLASH_ATTN_BF16;
  params.q_ptr = const_cast<void*>(a.q);
  params.k_ptr = const_cast<void*>(a.k);
  params.v_ptr = const_cast<void*>(a.v);
  params.o_ptr = a.out;
  // Strides in elements: [total, heads, head_dim], contiguous. Varlen: no batch strides.
  params.q_row_stride = params.o_row_stride = int64_t(a.num_heads) * a.head_dim;
  params.k_row_stride = params.v_row_stride = int64_t(a.num_heads_k) * a.head_dim;
  params.q_head_stride = params.k_head_stride = params.v_head_stride = params.o_head_stride = a.head_dim;
  params.cu_seqlens_q = const_cast<int*>(a.cu_seqlens_q);
  params.softmax_lse_ptr = a.softmax_lse;
  // A paged cache: [num_blocks, page_size, h_k, d], the block's stride as the batch stride, and
  // each sequence's length read from seqused_k as cu_seqlens_k non-cumulative (mha_fwd_kvcache's
  // way).
  params.is_seqlens_k_cumulative = !paged;
  if (paged) {
    params.cu_seqlens_k = const_cast<int*>(a.seqused_k);
    params.block_table = const_cast<int*>(a.block_table);
    params.block_table_batch_stride = a.max_blocks_per_seq;
    params.k_batch_stride = params.v_batch_stride = int64_t(a.page_size) * a.num_heads_k * a.head_dim;
  } else {
    params.cu_seqlens_k = const_cast<int*>(a.cu_seqlens_k);
  }

  params.b = a.batch;
  params.h = a.num_heads;
  params.h_k = a.num_heads_k;
  params.h_h_k_ratio = a.num_heads / a.num_heads_k;
  params.seqlen_q = a.max_seqlen_q;
  params.seqlen_k = a.max_seqlen_k;
  params.seqlen_q_rounded = round_multiple(a.max_seqlen_q, 128);
  params.seqlen_k_rounded = round_multiple(a.max_seqlen_k, 128);
  params.d = a.head_dim;
  params.d_rounded = round_multiple(a.head_dim, a.head_dim <= 128 ? 32 : 64);
  params.total_q = a.total_q;
  params.scale_softmax = launch.softmax_scale;
  params.scale_softmax_log2 = launch.softmax_scale * float(M_LOG2E);
  // p_dropout is the probability of keeping: all of them.
  params.p_dropout = 1.f;
  params.p_dropout_in_uint8_t = 255;
  params.rp_dropout = 1.f;
  params.scale_softmax_rp_dropout = launch.softmax_scale;
  // Causal is the window (seqlen_k, 0), bottom-right aligned; one query row sees every key.
  const bool causal = a.causal != 0 && a.max_seqlen_q > 1;
  params.is_causal = causal;
  params.window_size_left = causal ? a.max_seqlen_k : -1;
  params.window_size_right = causal ? 0 : -1;
  params.unpadded_lse = true;  // [num_heads, total_q], as the API's softmax_lse
  params.page_block_size = paged ? a.page_size : 1;
  params.num_splits = 1;

  if (!run(params, a.dtype, kernel_head_dim(a.head_dim), launch.stream)) {
    return fail(FLASH_ATTN_NOT_BUILT, "no kernel for this dtype and head dim in this build");
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_failed(e, "the forward kernel's launch");
  if (cudaError_t e = replace_floats(a.softmax_lse, a.softmax_lse, int64_t(a.num_heads) * a.total_q, INFINITY,
                                     -INFINITY, launch.stream);
      e != cudaSuccess) {
    return cuda_failed(e, "the LSE of rows without keys");
  }
  return FLASH_ATTN_OK;
}

}  // namespace flash_attn_lib
