// The FlashAttention 3 backend's backward pass: hopper/'s run_mha_bwd_ (preprocess, the dQ/dK/dV
// kernel, postprocess) reached without torch, with the parameters and scratch buffers that
// hopper/flash_api.cpp's mha_bwd sets for varlen input without softcap or local attention.
// Compiled where the profile has BACKWARD on.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include <cutlass/numeric_types.h>

#include "backend.h"
#include "built.h"
#include "flash.h"

namespace flash_attn_lib {

namespace {

using Built = HeadDims<64, 96, 128, 192, 256>;

int round_multiple(int x, int m) { return (x + m - 1) / m * m; }

template <int Arch>
bool run_bwd_arch(Flash_bwd_params& params, flash_attn_dtype dtype, cudaStream_t stream) {
  return dispatch_16bit<cutlass::half_t, cutlass::bfloat16_t>(dtype, [&](auto t) {
    return Built::dispatch(params.d_rounded, [&](auto d) {
      run_mha_bwd_<Arch, typename decltype(t)::type, decltype(d)::value, false>(params, stream);
    });
  });
}

bool run_bwd(Flash_bwd_params& params, flash_attn_dtype dtype, int cc, cudaStream_t stream) {
  if constexpr (kBackwardBuilt) {
#ifdef FLASH_ATTN_LIB_SM90
    if (cc >= 90 && cc < 100) return run_bwd_arch<90>(params, dtype, stream);
#endif
#ifdef FLASH_ATTN_LIB_SM8X
    if (cc == 86 || cc == 89) return run_bwd_arch<86>(params, dtype, stream);
    if (cc >= 80 && cc < 90) return run_bwd_arch<80>(params, dtype, stream);
#endif
  }
  (void)params, (void)dtype, (void)cc, (void)stream;
  return false;
}

// mha_bwd's tile sizes, which size the padded scratch buffers (no softcap, no local window).
struct Tiles {
  int m;
  int n;
};
Tiles bwd_tiles(int cc, int d_rounded, bool causal) {
  if (cc >= 90) {
    const int m = d_rounded <= 64 ? 128 : d_rounded <= 96 ? 64 : d_rounded <= 128 ? (causal ? 64 : 80) : 64;
    return {m, d_rounded <= 128 ? 128 : d_rounded <= 192 ? 96 : 80};
  }
  if (cc == 86 || cc == 89) {
    return {d_rounded <= 192 ? 64 : 32, d_rounded <= 96 ? 128 : d_rounded <= 128 ? 96 : 64};
  }
  return {d_rounded <= 64 ? 128 : 64, d_rounded <= 128 ? 128 : d_rounded <= 192 ? 80 : 64};
}

// Device scratch memory allocated on the stream, freed on it when the call ends.
struct Scratch {
  cudaStream_t stream;
  std::vector<void*> blocks;
  ~Scratch() {
    for (void* p : blocks) cudaFreeAsync(p, stream);
  }
  template <typename T>
  cudaError_t allocate(T** p, size_t count, bool zero) {
    cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(p), sizeof(T) * count, stream);
    if (e != cudaSuccess) return e;
    blocks.push_back(*p);
    return zero ? cudaMemsetAsync(*p, 0, sizeof(T) * count, stream) : cudaSuccess;
  }
};

}  // namespace

flash_attn_status varlen_bwd(const BwdLaunch& launch) {
  const flash_attn_varlen_bwd_args& a = launch.args;
  if (a.dtype == FLASH_ATTN_E4M3) return fail(FLASH_ATTN_INVALID_ARGUMENT, "the backward pass takes fp16 or bf16");
  const int cc = launch.compute_capability;
  const int d_rounded = Built::round_up(a.head_dim);
  const bool causal = a.causal != 0 && a.max_seqlen_q > 1;
  if (a.deterministic != 0 && d_rounded >= 256) {
    return fail(FLASH_ATTN_INVALID_ARGUMENT, "FlashAttention 3 has no deterministic backward pass for head dim 256");
  }
  const Tiles tile = bwd_tiles(cc, d_rounded, causal);
  const int total_q_padded = round_multiple(a.total_q + a.batch * tile.m, tile.m);
  const int total_k_padded = round_multiple(a.total_k + a.batch * tile.n, tile.n);
  const int64_t q_row = int64_t(a.num_heads) * a.head_dim, k_row = int64_t(a.num_heads_k) * a.head_dim;

  Flash_bwd_params params{};
  params.is_bf16 = a.dtype == FLASH_ATTN_BF16;
  params.q_ptr = const_cast<void*>(a.q);
  params.k_ptr = const_cast<void*>(a.k);
  params.v_ptr = const_cast<void*>(a.v);
  params.o_ptr = const_cast<void*>(a.out);
  params.do_ptr = const_cast<void*>(a.dout);
  params.dq_ptr = a.dq;
  params.dk_ptr = a.dk;
  params.dv_ptr = a.dv;
  params.q_row_stride = params.o_row_stride = params.do_row_stride = params.dq_row_stride = q_row;
  params.k_row_stride = params.v_row_stride = params.dk_row_stride = params.dv_row_stride = k_row;
  params.q_head_stride = params.k_head_stride = params.v_head_stride = params.o_head_stride = a.head_dim;
  params.do_head_stride = params.dq_head_stride = params.dk_head_stride = params.dv_head_stride = a.head_dim;
  params.v_dim_stride = 1;
  params.cu_seqlens_q = const_cast<int*>(a.cu_seqlens_q);
  params.cu_seqlens_k = const_cast<int*>(a.cu_seqlens_k);
  params.softmax_lse_ptr = const_cast<float*>(a.softmax_lse);
  params.b = a.batch;
  params.h = a.num_heads;
  params.h_k = a.num_heads_k;
  params.seqlen_q = a.max_seqlen_q;
  params.seqlen_k = a.max_seqlen_k;
  params.seqlen_q_rounded = round_multiple(a.max_seqlen_q, tile.m);
  params.seqlen_k_rounded = round_multiple(a.max_seqlen_k, tile.n);
  params.total_q = a.total_q;
  params.total_k = a.total_k;
  params.d = params.dv = a.head_dim;
  params.d_rounded = params.dv_rounded = d_rounded;
  params.scale_softmax = launch.softmax_scale;
  params.p_dropout = 1.f;
  params.rp_dropout = 1.f;
  params.p_dropout_in_uint8_t = 255;
  params.is_causal = causal;
  params.window_size_left = a.max_seqlen_k - 1;
  params.window_size_right = causal ? 0 : a.max_seqlen_q - 1;
  params.arch = cc;
  params.num_sm = launch.num_sm;
  params.deterministic = a.deterministic != 0;

  // mha_bwd's buffers for varlen input: softmax_d and the LSE in log2 [h, total_q padded], dQ's
  // float accumulator [h, total_q padded * d], dK/dV accumulators for grouped heads (zeroed), and
  // the semaphores.
  Scratch scratch{launch.stream, {}};
  const bool grouped = a.num_heads != a.num_heads_k;
  float *softmax_d = nullptr, *lse_log2 = nullptr, *dq_accum = nullptr, *dk_accum = nullptr, *dv_accum = nullptr;
  int *dq_semaphore = nullptr, *dk_semaphore = nullptr, *dv_semaphore = nullptr;
  const size_t q_rows = size_t(a.num_heads) * total_q_padded, k_rows = size_t(a.num_heads_k) * total_k_padded;
  const int m_blocks = (a.max_seqlen_q + tile.m - 1) / tile.m, n_blocks = (a.max_seqlen_k + tile.n - 1) / tile.n;
  for (const cudaError_t e : {
           scratch.allocate(&softmax_d, q_rows, false),
           scratch.allocate(&lse_log2, q_rows, false),
           scratch.allocate(&dq_accum, q_rows * d_rounded, false),
           grouped ? scratch.allocate(&dk_accum, k_rows * d_rounded, true) : cudaSuccess,
           grouped ? scratch.allocate(&dv_accum, k_rows * d_rounded, true) : cudaSuccess,
           scratch.allocate(&dq_semaphore, size_t(m_blocks) * a.batch * a.num_heads, false),
           grouped && params.deterministic
               ? scratch.allocate(&dk_semaphore, size_t(n_blocks) * a.batch * a.num_heads_k, true)
               : cudaSuccess,
           grouped && params.deterministic
               ? scratch.allocate(&dv_semaphore, size_t(n_blocks) * a.batch * a.num_heads_k, true)
               : cudaSuccess,
       }) {
    if (e != cudaSuccess) return cuda_failed(e, "allocating the backward pass's scratch memory");
  }
  params.dsoftmax_sum = softmax_d;
  params.softmax_lse_log2_ptr = lse_log2;
  params.dq_accum_ptr = dq_accum;
  params.dk_accum_ptr = dk_accum;
  params.dv_accum_ptr = dv_accum;
  params.dq_semaphore = dq_semaphore;
  params.dk_semaphore = dk_semaphore;
  params.dv_semaphore = dv_semaphore;

  if (!run_bwd(params, a.dtype, cc, launch.stream)) {
    return fail(FLASH_ATTN_NOT_BUILT, "no backward kernel for this dtype and head dim in this build");
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_failed(e, "the backward kernels' launch");
  return FLASH_ATTN_OK;
}

}  // namespace flash_attn_lib
