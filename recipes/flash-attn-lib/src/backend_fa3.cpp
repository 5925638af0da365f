// The FlashAttention 3 backend: hopper/'s forward kernels (Flash_fwd_params, run_mha_fwd_,
// prepare_varlen_num_blocks) reached without torch. The build compiles the instantiations the
// profile keeps (FLASHATTENTION_DISABLE_* as the source's own setup.py spells them) of the
// plain variant: no split, no paged KV, no softcap; PackGQA as the architecture requires it.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include <cutlass/numeric_types.h>

#include "backend.h"
#include "built.h"
#include "flash.h"

namespace flash_attn_lib {

namespace {

using Built = HeadDims<64, 96, 128, 192, 256>;

int round_multiple(int x, int m) { return (x + m - 1) / m * m; }

// sm90 kernels: no PackGQA; sm8x kernels are built with PackGQA on (hopper/'s ARCH_SWITCH and
// generate_kernels.py: 86 serves 86 and 89, 80 the rest below 90).
template <int Arch>
bool run_dtype(Flash_fwd_params& params, flash_attn_dtype dtype, cudaStream_t stream) {
  constexpr bool kPackGqa = Arch < 90;
  const auto run_head_dim = [&](auto t) {
    return Built::dispatch(params.d_rounded, [&](auto d) {
      constexpr int kDim = decltype(d)::value;
      run_mha_fwd_<Arch, typename decltype(t)::type, kDim, kDim, false, false, false, kPackGqa>(params, stream);
    });
  };
  if constexpr (Arch == 90 && kFp8Built) {
    if (dtype == FLASH_ATTN_E4M3) return run_head_dim(Type<cutlass::float_e4m3_t>{});
  }
  return dispatch_16bit<cutlass::half_t, cutlass::bfloat16_t>(dtype, run_head_dim);
}

bool run(Flash_fwd_params& params, flash_attn_dtype dtype, int cc, cudaStream_t stream) {
#ifdef FLASH_ATTN_LIB_SM90
  if (cc >= 90 && cc < 100) return run_dtype<90>(params, dtype, stream);
#endif
#ifdef FLASH_ATTN_LIB_SM8X
  if (cc == 86 || cc == 89) return run_dtype<86>(params, dtype, stream);
  if (cc >= 80 && cc < 90) return run_dtype<80>(params, dtype, stream);
#endif
  (void)params, (void)dtype, (void)cc, (void)stream;
  return false;
}

bool arch_built(int cc) {
#ifdef FLASH_ATTN_LIB_SM90
  if (cc >= 90 && cc < 100) return true;
#endif
#ifdef FLASH_ATTN_LIB_SM8X
  if (cc >= 80 && cc < 90) return true;
#endif
  (void)cc;
  return false;
}

}  // namespace

bool supports(flash_attn_dtype dtype, int head_dim, int cc) {
  if (!arch_built(cc) || Built::round_up(head_dim) == 0) return false;
  if (dtype == FLASH_ATTN_FP16) return kFp16Built;
  return dtype != FLASH_ATTN_E4M3 || (kFp8Built && cc >= 90 && cc < 100);
}

flash_attn_status varlen_fwd(const Launch& launch) {
  const flash_attn_varlen_fwd_args& a = launch.args;
  Flash_fwd_params params{};
  params.is_bf16 = a.dtype == FLASH_ATTN_BF16;
  params.is_e4m3 = a.dtype == FLASH_ATTN_E4M3;
  params.q_ptr = const_cast<void*>(a.q);
  params.k_ptr = const_cast<void*>(a.k);
  params.v_ptr = const_cast<void*>(a.v);
  params.o_ptr = a.out;
  // Strides in elements: [total, heads, head_dim], contiguous. Varlen: no batch strides.
  params.q_row_stride = int64_t(a.num_heads) * a.head_dim;
  params.k_row_stride = int64_t(a.num_heads_k) * a.head_dim;
  params.v_row_stride = int64_t(a.num_heads_k) * a.head_dim;
  params.o_row_stride = int64_t(a.num_heads) * a.head_dim;
  params.q_head_stride = params.k_head_stride = params.v_head_stride = params.o_head_stride = a.head_dim;
  params.v_dim_stride = 1;
  params.cu_seqlens_q = const_cast<int*>(a.cu_seqlens_q);
  params.cu_seqlens_k = const_cast<int*>(a.cu_seqlens_k);
  params.softmax_lse_ptr = a.softmax_lse;

  params.b = a.batch;
  params.b_k = a.batch;
  params.h = a.num_heads;
  params.h_k = a.num_heads_k;
  params.seqlen_q = a.max_seqlen_q;
  params.seqlen_k = a.max_seqlen_k;
  params.seqlen_q_rounded = round_multiple(a.max_seqlen_q, 128);
  params.seqlen_k_rounded = round_multiple(a.max_seqlen_k, 128);
  params.total_q = a.total_q;
  params.total_k = a.total_k;
  params.d = params.dv = a.head_dim;
  params.d_rounded = params.dv_rounded = Built::round_up(a.head_dim);
  params.page_size = 1;
  params.scale_softmax = launch.softmax_scale;
  params.p_dropout = 1.f;  // the probability of keeping: no dropout in the forward of inference
  params.rp_dropout = 1.f;
  params.p_dropout_in_uint8_t = 255;

  // Causal is the window (seqlen_k - 1, 0); otherwise the whole rectangle. A single query row
  // sees every key either way.
  const bool causal = a.causal != 0 && a.max_seqlen_q > 1;
  params.is_causal = causal;
  params.is_local = false;
  params.window_size_left = a.max_seqlen_k - 1;
  params.window_size_right = causal ? 0 : a.max_seqlen_q - 1;
  params.arch = launch.compute_capability;
  params.num_sm = launch.num_sm;
  params.num_splits = 1;
  params.pack_gqa = launch.compute_capability < 90;

  // The varlen scheduler's metadata, in one int32 buffer: per batch (rounded to 4, for 16-byte
  // alignment) the dynamic split count, the m blocks, the sorted batch order and, when causal,
  // the heads that fit in L2; then the tile counter the persistent scheduler advances. The
  // preparation kernel fills it (and zeroes the counter) before the attention kernel runs.
  const int b_rounded = round_multiple(a.batch, 4);
  params.varlen_sort_batches = true;
  params.head_swizzle = causal;
  params.prepare_varlen_pdl = a.batch <= 992 && launch.compute_capability >= 90;
  const int vectors = 2 + 1 + (causal ? 1 : 0);
  const int offset = b_rounded * vectors;
  int* metadata = nullptr;
  if (cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&metadata), sizeof(int) * (offset + 1), launch.stream);
      e != cudaSuccess) {
    return cuda_failed(e, "cudaMallocAsync of the scheduler's metadata");
  }
  params.num_splits_dynamic_ptr = metadata;
  params.num_m_blocks_ptr = metadata + b_rounded;
  params.varlen_batch_idx_ptr = metadata + 2 * b_rounded;
  params.num_nheads_in_l2_ptr = causal ? metadata + 3 * b_rounded : nullptr;
  params.tile_count_semaphore = metadata + offset;
  params.tile_count_semaphore_offset = offset;
  params.skip_scheduler_metadata_computation = false;

  const bool ran = run(params, a.dtype, launch.compute_capability, launch.stream);
  const cudaError_t launched = cudaGetLastError();
  const cudaError_t freed = cudaFreeAsync(metadata, launch.stream);
  if (!ran) return fail(FLASH_ATTN_NOT_BUILT, "no kernel for this dtype and head dim in this build");
  if (launched != cudaSuccess) return cuda_failed(launched, "the forward kernel's launch");
  if (freed != cudaSuccess) return cuda_failed(freed, "cudaFreeAsync of the scheduler's metadata");
  return FLASH_ATTN_OK;
}

}  // namespace flash_attn_lib
