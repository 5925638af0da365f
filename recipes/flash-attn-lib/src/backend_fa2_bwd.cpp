// The FlashAttention 2 backend's backward pass: csrc/flash_attn's run_mha_bwd_ (the dQ/dK/dV
// kernels and dQ's conversion) reached without torch, with the parameters and scratch buffers
// flash_api.cpp's mha_varlen_bwd sets without dropout, ALiBi, softcap or a sliding window. For
// grouped heads its kernel writes dK and dV per query head; head_groups.cu sums each group, as
// mha_varlen_bwd's at::sum_out does. Compiled where the profile has BACKWARD on.

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <cutlass/numeric_types.h>

#include "backend.h"
#include "built.h"
#include "flash.h"
#include "head_groups.h"
#include "lse_rows.h"

namespace flash_attn_lib {

namespace {

using FLASH_NAMESPACE::Flash_bwd_params;
using FLASH_NAMESPACE::run_mha_bwd_;

using Built = HeadDims<32, 64, 96, 128, 192, 256>;

int round_multiple(int x, int m) { return (x + m - 1) / m * m; }

bool run_bwd(Flash_bwd_params& params, flash_attn_dtype dtype, cudaStream_t stream) {
  if constexpr (kBackwardBuilt) {
    return dispatch_16bit<cutlass::half_t, cutlass::bfloat16_t>(dtype, [&](auto t) {
      return dispatch_causal(params.is_causal, [&](auto causal) {
        // flash_api.cpp's HEADDIM_SWITCH: the kernel of the next head dim up.
        return Built::dispatch(Built::round_up(params.d), [&](auto d) {
          run_mha_bwd_<typename decltype(t)::type, decltype(d)::value, decltype(causal)::value>(params, stream);
        });
      });
    });
  }
  (void)params, (void)dtype, (void)stream;
  return false;
}

// Device scratch memory allocated on the stream, freed on it when the call ends.
struct Scratch {
  cudaStream_t stream;
  std::vector<void*> blocks;
  ~Scratch() {
    for (void* p : blocks) cudaFreeAsync(p, stream);
  }
  cudaError_t allocate(void** p, size_t bytes) {
    const cudaError_t e = cudaMallocAsync(p, bytes, stream);
    if (e == cudaSuccess) blocks.push_back(*p);
    return e;
  }
};

}  // namespace

flash_attn_status varlen_bwd(const BwdLaunch& launch) {
  const flash_attn_varlen_bwd_args& a = launch.args;
  if (a.dtype == FLASH_ATTN_E4M3) return fail(FLASH_ATTN_INVALID_ARGUMENT, "the backward pass takes fp16 or bf16");
  const bool causal = a.causal != 0 && a.max_seqlen_q > 1;
#ifdef FLASHATTENTION_DISABLE_CAUSAL
  if (causal) return fail(FLASH_ATTN_NOT_BUILT, "this build has no causal kernels");
#endif
  const int d_rounded = round_multiple(a.head_dim, a.head_dim <= 128 ? 32 : 64);
  const int groups = a.num_heads / a.num_heads_k;
  const int64_t q_row = int64_t(a.num_heads) * a.head_dim, k_row = int64_t(a.num_heads_k) * a.head_dim;
  const int64_t expanded_row = int64_t(a.num_heads) * a.head_dim;  // dK, dV per query head
  const int64_t element = 2;

  // mha_varlen_bwd's buffers: softmax_d [h, total_q + 128 b], dQ's float accumulator
  // [(total_q + 128 b), h, d_rounded] (one split unless deterministic), and for grouped heads
  // dK/dV per query head.
  Scratch scratch{launch.stream, {}};
  const int64_t padded_q = int64_t(a.total_q) + 128 * a.batch;
  const int nsplits = a.deterministic != 0 ? (launch.num_sm + a.batch * a.num_heads - 1) / (a.batch * a.num_heads) : 1;
  void *softmax_d = nullptr, *dq_accum = nullptr, *dk_expanded = a.dk, *dv_expanded = a.dv, *lse = nullptr;
  const int64_t lse_count = int64_t(a.num_heads) * a.total_q;
  const size_t dq_accum_bytes = sizeof(float) * size_t(nsplits) * padded_q * a.num_heads * d_rounded;
  for (const cudaError_t e : {
           scratch.allocate(&softmax_d, sizeof(float) * size_t(a.num_heads) * padded_q),
           scratch.allocate(&dq_accum, dq_accum_bytes),
           scratch.allocate(&lse, sizeof(float) * size_t(lse_count)),
           groups > 1 ? scratch.allocate(&dk_expanded, size_t(element * expanded_row) * a.total_k) : cudaSuccess,
           groups > 1 ? scratch.allocate(&dv_expanded, size_t(element * expanded_row) * a.total_k) : cudaSuccess,
       }) {
    if (e != cudaSuccess) return cuda_failed(e, "allocating the backward pass's scratch memory");
  }
  if (a.deterministic != 0) {  // the splits' accumulators are summed: they start at zero
    if (cudaError_t e = cudaMemsetAsync(dq_accum, 0, dq_accum_bytes, launch.stream); e != cudaSuccess) {
      return cuda_failed(e, "cudaMemsetAsync of dQ's accumulator");
    }
  }

  // The kernels take a row without keys by its +INFINITY (P = exp(S - LSE) = 0); the API's
  // forward pass gave it as -INFINITY.
  if (cudaError_t e =
          replace_floats(a.softmax_lse, static_cast<float*>(lse), lse_count, -INFINITY, INFINITY, launch.stream);
      e != cudaSuccess) {
    return cuda_failed(e, "the LSE of rows without keys");
  }

  Flash_bwd_params params{};
  params.is_bf16 = a.dtype == FLASH_ATTN_BF16;
  params.q_ptr = const_cast<void*>(a.q);
  params.k_ptr = const_cast<void*>(a.k);
  params.v_ptr = const_cast<void*>(a.v);
  params.o_ptr = const_cast<void*>(a.out);
  params.do_ptr = const_cast<void*>(a.dout);
  params.dq_ptr = a.dq;
  params.dk_ptr = dk_expanded;
  params.dv_ptr = dv_expanded;
  params.q_row_stride = params.o_row_stride = params.do_row_stride = params.dq_row_stride = q_row;
  params.k_row_stride = params.v_row_stride = k_row;
  params.dk_row_stride = params.dv_row_stride = groups > 1 ? expanded_row : k_row;
  params.q_head_stride = params.k_head_stride = params.v_head_stride = params.o_head_stride = a.head_dim;
  params.do_head_stride = params.dq_head_stride = params.dk_head_stride = params.dv_head_stride = a.head_dim;
  params.cu_seqlens_q = const_cast<int*>(a.cu_seqlens_q);
  params.cu_seqlens_k = const_cast<int*>(a.cu_seqlens_k);
  params.is_seqlens_k_cumulative = true;
  params.softmax_lse_ptr = lse;
  params.dq_accum_ptr = dq_accum;
  params.dsoftmax_sum = softmax_d;
  params.dq_accum_split_stride = a.deterministic != 0 ? padded_q * a.num_heads * d_rounded : 0;
  params.deterministic = a.deterministic != 0;
  params.unpadded_lse = true;
  params.b = a.batch;
  params.h = a.num_heads;
  params.h_k = a.num_heads_k;
  params.h_h_k_ratio = groups;
  params.seqlen_q = a.max_seqlen_q;
  params.seqlen_k = a.max_seqlen_k;
  params.seqlen_q_rounded = round_multiple(a.max_seqlen_q, 128);
  params.seqlen_k_rounded = round_multiple(a.max_seqlen_k, 128);
  params.d = a.head_dim;
  params.d_rounded = d_rounded;
  params.total_q = a.total_q;
  params.scale_softmax = launch.softmax_scale;
  params.scale_softmax_log2 = launch.softmax_scale * float(M_LOG2E);
  params.p_dropout = 1.f;
  params.p_dropout_in_uint8_t = 255;
  params.rp_dropout = 1.f;
  params.scale_softmax_rp_dropout = launch.softmax_scale;
  params.is_causal = causal;
  params.window_size_left = causal ? a.max_seqlen_k : -1;
  params.window_size_right = causal ? 0 : -1;

  if (!run_bwd(params, a.dtype, launch.stream)) {
    return fail(FLASH_ATTN_NOT_BUILT, "no backward kernel for this dtype and head dim in this build");
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_failed(e, "the backward kernels' launch");
  if (groups > 1) {
    for (auto [expanded, out] : {std::pair{dk_expanded, a.dk}, std::pair{dv_expanded, a.dv}}) {
      if (cudaError_t e = sum_head_groups(params.is_bf16, expanded, out, a.total_k, a.num_heads_k, groups, a.head_dim,
                                          launch.stream);
          e != cudaSuccess) {
        return cuda_failed(e, "summing dK and dV over the head groups");
      }
    }
  }
  return FLASH_ATTN_OK;
}

}  // namespace flash_attn_lib
