// The FlashAttention 3 backend's forward pass: hopper/'s forward kernels (Flash_fwd_params,
// run_mha_fwd_, prepare_varlen_num_blocks, run_mha_fwd_combine_) reached without torch, with the
// parameters hopper/flash_api.cpp's mha_fwd sets for varlen input without softcap, local
// attention or appended keys. The build compiles the instantiations the profile keeps
// (FLASHATTENTION_DISABLE_* as the source's own setup.py spells them): the plain variant, and
// the split and paged ones (PackGQA on, as upstream builds them) where SPLIT and PAGEDKV are on.
// The backward pass is backend_fa3_bwd.cpp.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>

#include <cutlass/numeric_types.h>

#include "backend.h"
#include "built.h"
#include "flash.h"
#include "heuristics.h"
#include "tile_size.h"

namespace flash_attn_lib {

namespace {

using Built = HeadDims<64, 96, 128, 192, 256>;

int round_multiple(int x, int m) { return (x + m - 1) / m * m; }

// The plain sm90 kernels have no PackGQA; sm8x, split and paged kernels are built with PackGQA on
// (hopper/'s run_mha_fwd and generate_kernels.py: 86 serves 86 and 89, 80 the rest below 90).
template <int Arch, bool Split, bool Paged>
bool run_dtype(Flash_fwd_params& params, flash_attn_dtype dtype, cudaStream_t stream) {
  constexpr bool kPackGqa = Arch < 90 || Split || Paged;
  const auto run_head_dim = [&](auto t) {
    return Built::dispatch(params.d_rounded, [&](auto d) {
      constexpr int kDim = decltype(d)::value;
      run_mha_fwd_<Arch, typename decltype(t)::type, kDim, kDim, Split, Paged, false, kPackGqa>(params, stream);
    });
  };
  if constexpr (Arch == 90 && kFp8Built) {
    if (dtype == FLASH_ATTN_E4M3) return run_head_dim(Type<cutlass::float_e4m3_t>{});
  }
  return dispatch_16bit<cutlass::half_t, cutlass::bfloat16_t>(dtype, run_head_dim);
}

// The variant: only those the profile built are named (a template never instantiated is never
// needed at link time).
template <int Arch>
bool run_variant(Flash_fwd_params& params, flash_attn_dtype dtype, cudaStream_t stream) {
  const bool split = params.num_splits > 1, paged = params.page_table != nullptr;
  if constexpr (kSplitBuilt && kPagedBuilt) {
    if (split && paged) return run_dtype<Arch, true, true>(params, dtype, stream);
  }
  if constexpr (kSplitBuilt) {
    if (split && !paged) return run_dtype<Arch, true, false>(params, dtype, stream);
  }
  if constexpr (kPagedBuilt) {
    if (paged && !split) return run_dtype<Arch, false, true>(params, dtype, stream);
  }
  return !split && !paged && run_dtype<Arch, false, false>(params, dtype, stream);
}

bool run(Flash_fwd_params& params, flash_attn_dtype dtype, int cc, cudaStream_t stream) {
#ifdef FLASH_ATTN_LIB_SM90
  if (cc >= 90 && cc < 100) return run_variant<90>(params, dtype, stream);
#endif
#ifdef FLASH_ATTN_LIB_SM8X
  if (cc == 86 || cc == 89) return run_variant<86>(params, dtype, stream);
  if (cc >= 80 && cc < 90) return run_variant<80>(params, dtype, stream);
#endif
  (void)params, (void)dtype, (void)cc, (void)stream;
  return false;
}

// The combine kernels of flash_fwd_combine.cu: the output's type, and 64 or 128 columns a block.
void combine(Flash_fwd_params& params, cudaStream_t stream) {
  if constexpr (kSplitBuilt) {
    const auto run_type = [&](auto t) {
      using T = typename decltype(t)::type;
      if (params.dv <= 64) {
        run_mha_fwd_combine_<T, float, 64>(params, stream, true);
      } else {
        run_mha_fwd_combine_<T, float, 128>(params, stream, true);
      }
    };
    // e4m3 input writes a bf16 output, as mha_fwd sets is_bf16 for the combine.
    if (params.is_bf16 || params.is_e4m3) {
      run_type(Type<cutlass::bfloat16_t>{});
    } else {
      run_type(Type<cutlass::half_t>{});
    }
  }
  (void)params, (void)stream;
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

int capabilities() {
  return (kPagedBuilt ? FLASH_ATTN_CAP_PAGED_KV : 0) | (kSplitBuilt ? FLASH_ATTN_CAP_SPLIT_KV : 0) |
         (kBackwardBuilt ? FLASH_ATTN_CAP_BACKWARD : 0);
}

const char* profiles_with(int capability) {
  return capability == FLASH_ATTN_CAP_BACKWARD ? "full" : "inference or full";
}

// num_splits 0: hopper/flash_api.cpp's choice (get_num_splits) for a varlen call, from the
// source's own tile sizes (tile_size.h) and split heuristic (heuristics.h): the keys a kernel tile
// takes at a time, the query blocks of one key head (PackGQA; the varlen scheduler splits per
// sequence, so one sequence's worth), against the SM count.
int num_splits(const Launch& launch) {
  const flash_attn_varlen_fwd_args& a = launch.args;
  if (a.num_splits > 0 || !kSplitBuilt) return std::max(1, a.num_splits);
  const bool paged = a.block_table != nullptr, causal = a.causal != 0 && a.max_seqlen_q > 1;
  const int cc = launch.compute_capability, element = a.dtype == FLASH_ATTN_E4M3 ? 1 : 2;
  const int d = Built::round_up(a.head_dim);
  const int seqlen_k = paged ? a.max_blocks_per_seq * a.page_size : a.max_seqlen_k;
  const auto [block_m, block_n] = [&] {
    if (cc >= 90) {
      const auto sm90 = tile_size_fwd_sm90(d, d, causal, false, element, false, paged, false);
      return std::pair{std::get<0>(sm90), std::get<1>(sm90)};
    }
    const auto sm8x = tile_size_fwd_sm8x(cc == 86 || cc == 89, d, d, causal, false, element, paged, true, false, false);
    return std::pair{std::get<0>(sm8x), std::get<1>(sm8x)};
  }();
  const int num_n_blocks = (seqlen_k + block_n - 1) / block_n;
  const int num_m_blocks = (a.max_seqlen_q * (a.num_heads / a.num_heads_k) + block_m - 1) / block_m;
  const int size_one_kv_head = seqlen_k * (a.head_dim + a.head_dim) * element;
  return num_splits_heuristic(a.num_heads_k * num_m_blocks, launch.num_sm, num_n_blocks, num_m_blocks, size_one_kv_head,
                              causal, 128);
}

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
  params.softmax_lse_ptr = a.softmax_lse;
  const bool paged = a.block_table != nullptr;
  // A paged cache: k and v are [num_blocks, page_size, h_k, d], the block's stride is the
  // "batch" stride, and each sequence's length is seqused_k (no cu_seqlens_k), as mha_fwd has it.
  // The non-TMA paged kernels (the _paged_ instantiations) serve every page size.
  if (paged) {
    params.page_table = const_cast<int*>(a.block_table);
    params.page_table_batch_stride = a.max_blocks_per_seq;
    params.page_size = a.page_size;
    params.num_pages = a.num_blocks;
    params.pagedkv_tma = false;
    params.seqused_k = const_cast<int*>(a.seqused_k);
    params.k_batch_stride = params.v_batch_stride = int64_t(a.page_size) * a.num_heads_k * a.head_dim;
  } else {
    params.cu_seqlens_k = const_cast<int*>(a.cu_seqlens_k);
    params.page_size = 1;
  }
  const int seqlen_k = paged ? a.max_blocks_per_seq * a.page_size : a.max_seqlen_k;

  params.b = a.batch;
  params.b_k = a.batch;
  params.h = a.num_heads;
  params.h_k = a.num_heads_k;
  params.seqlen_q = a.max_seqlen_q;
  params.seqlen_k = seqlen_k;
  params.seqlen_q_rounded = round_multiple(a.max_seqlen_q, 128);
  params.seqlen_k_rounded = round_multiple(seqlen_k, 128);
  params.total_q = a.total_q;
  params.total_k = paged ? a.batch * a.page_size : a.total_k;
  params.d = params.dv = a.head_dim;
  params.d_rounded = params.dv_rounded = Built::round_up(a.head_dim);
  params.scale_softmax = launch.softmax_scale;
  params.p_dropout = 1.f;  // the probability of keeping: no dropout in the forward of inference
  params.rp_dropout = 1.f;
  params.p_dropout_in_uint8_t = 255;

  // Causal is the window (seqlen_k - 1, 0); otherwise the whole rectangle. A single query row
  // sees every key either way.
  const bool causal = a.causal != 0 && a.max_seqlen_q > 1;
  params.is_causal = causal;
  params.is_local = false;
  params.window_size_left = seqlen_k - 1;
  params.window_size_right = causal ? 0 : a.max_seqlen_q - 1;
  params.arch = launch.compute_capability;
  params.num_sm = launch.num_sm;
  // The varlen scheduler splits each sequence into at most num_splits parts, fewer where it has
  // few key blocks (prepare_varlen_num_blocks); the combine kernel merges them.
  params.num_splits = num_splits(launch);
  params.pack_gqa = launch.compute_capability < 90 || paged || params.num_splits > 1;

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

  // Split: each part's output and LSE in float, [num_splits, h, total_q, d] and [num_splits, h,
  // total_q], the layout mha_fwd allocates for varlen queries.
  float* accum = nullptr;
  if (params.num_splits > 1) {
    const int64_t rows = int64_t(a.num_heads) * a.total_q;
    const size_t floats = size_t(params.num_splits) * rows * (a.head_dim + 1);
    if (cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&accum), sizeof(float) * floats, launch.stream);
        e != cudaSuccess) {
      cudaFreeAsync(metadata, launch.stream);
      return cuda_failed(e, "cudaMallocAsync of the split-KV partial results");
    }
    params.is_fp32 = false;
    params.oaccum_ptr = accum;
    params.softmax_lseaccum_ptr = accum + size_t(params.num_splits) * rows * a.head_dim;
    params.oaccum_split_stride = rows * a.head_dim;
    params.oaccum_head_stride = int64_t(a.total_q) * a.head_dim;
    params.oaccum_row_stride = a.head_dim;
    params.lseaccum_split_stride = rows;
    params.lseaccum_head_stride = a.total_q;
  }

  const bool ran = run(params, a.dtype, launch.compute_capability, launch.stream);
  cudaError_t launched = cudaGetLastError();
  if (ran && launched == cudaSuccess && params.num_splits > 1) {
    combine(params, launch.stream);
    launched = cudaGetLastError();
  }
  const cudaError_t freed = cudaFreeAsync(metadata, launch.stream);
  const cudaError_t freed_accum = accum != nullptr ? cudaFreeAsync(accum, launch.stream) : cudaSuccess;
  if (!ran) return fail(FLASH_ATTN_NOT_BUILT, "no kernel for this dtype, head dim and variant in this build");
  if (launched != cudaSuccess) return cuda_failed(launched, "the forward kernel's launch");
  if (freed != cudaSuccess) return cuda_failed(freed, "cudaFreeAsync of the scheduler's metadata");
  if (freed_accum != cudaSuccess) return cuda_failed(freed_accum, "cudaFreeAsync of the split-KV partial results");
  return FLASH_ATTN_OK;
}

}  // namespace flash_attn_lib
