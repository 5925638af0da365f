// The bundled example's backend (examples/flash_example): its kernels take fixed-length batches
// ([b, s, h, d] with batch strides), so a varlen call runs them once per sequence, at the
// sequence's offset, as b = 1. The sequence bounds are read back from the device first: one
// synchronisation of `stream` per call, which a reference backend can afford.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend.h"
#include "built.h"
#include "flash.h"
#include "lse_rows.h"

namespace flash_attn_lib {

namespace {

using flash_example::bf16_t;
using flash_example::Flash_fwd_params;
using flash_example::fp16_t;
using flash_example::run_mha_fwd_;

using Built = HeadDims<32, 64, 96, 128>;

bool run(Flash_fwd_params& params, flash_attn_dtype dtype, int rounded, cudaStream_t stream) {
  return dispatch_16bit<fp16_t, bf16_t>(dtype, [&](auto t) {
    return dispatch_causal(params.is_causal, [&](auto causal) {
      return Built::dispatch(rounded, [&](auto d) {
        run_mha_fwd_<typename decltype(t)::type, decltype(d)::value, decltype(causal)::value>(params, stream);
      });
    });
  });
}

}  // namespace

// The example's kernels are forward-only and over packed keys.
int capabilities() { return 0; }

const char* profiles_with(int) { return ""; }  // forward only, in every profile

int num_splits(const Launch&) { return 1; }  // no split-KV

flash_attn_status varlen_bwd(const BwdLaunch&) {
  return fail(FLASH_ATTN_NOT_BUILT, "the example has no backward kernels");
}

bool supports(flash_attn_dtype dtype, int head_dim, int cc) {
  if (dtype == FLASH_ATTN_FP16 && !kFp16Built) return false;
  return cc >= 80 && runs_on(cc) && dtype != FLASH_ATTN_E4M3 && Built::round_up(head_dim) != 0;
}

flash_attn_status varlen_fwd(const Launch& launch) {
  const flash_attn_varlen_fwd_args& a = launch.args;
  // One query row sees every key, causal or not (as FlashAttention treats it).
  const bool causal = a.causal != 0 && a.max_seqlen_q > 1;
#ifdef FLASHATTENTION_DISABLE_CAUSAL
  if (causal) return fail(FLASH_ATTN_NOT_BUILT, "this build has no causal kernels (profile without CAUSAL)");
#endif
  std::vector<int> cu_q(a.batch + 1), cu_k(a.batch + 1);
  const size_t bounds = sizeof(int) * (a.batch + 1);
  if (cudaError_t e = cudaMemcpyAsync(cu_q.data(), a.cu_seqlens_q, bounds, cudaMemcpyDeviceToHost, launch.stream);
      e != cudaSuccess) {
    return cuda_failed(e, "reading cu_seqlens_q");
  }
  if (cudaError_t e = cudaMemcpyAsync(cu_k.data(), a.cu_seqlens_k, bounds, cudaMemcpyDeviceToHost, launch.stream);
      e != cudaSuccess) {
    return cuda_failed(e, "reading cu_seqlens_k");
  }
  if (cudaError_t e = cudaStreamSynchronize(launch.stream); e != cudaSuccess) {
    return cuda_failed(e, "cudaStreamSynchronize");
  }
  const int rounded = Built::round_up(a.head_dim);
  const int64_t element = 2;  // fp16 and bf16
  const int64_t q_row = int64_t(a.num_heads) * a.head_dim, k_row = int64_t(a.num_heads_k) * a.head_dim;
  // The kernel writes a sequence's LSE as [h, len]; the API's is [h, total_q].
  float* lse = nullptr;
  const size_t lse_bytes = sizeof(float) * size_t(a.num_heads) * std::max(1, a.max_seqlen_q);
  if (cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&lse), lse_bytes, launch.stream); e != cudaSuccess) {
    return cuda_failed(e, "cudaMallocAsync of the LSE buffer");
  }
  // A sequence without keys keeps this LSE; the kernel's +INFINITY for a row without keys becomes
  // -INFINITY below (the API's).
  const int64_t lse_count = int64_t(a.num_heads) * a.total_q;
  flash_attn_status status = FLASH_ATTN_OK;
  if (cudaError_t e = fill_floats(a.softmax_lse, lse_count, -INFINITY, launch.stream); e != cudaSuccess) {
    status = cuda_failed(e, "filling the LSE");
  }
  for (int i = 0; i < a.batch && status == FLASH_ATTN_OK; ++i) {
    const int lq = cu_q[i + 1] - cu_q[i], lk = cu_k[i + 1] - cu_k[i];
    if (lq < 0 || lk < 0 || lq > a.max_seqlen_q || lk > a.max_seqlen_k || cu_q[i + 1] > a.total_q ||
        cu_k[i + 1] > a.total_k) {
      status = fail(FLASH_ATTN_INVALID_ARGUMENT, "cu_seqlens of sequence " + std::to_string(i) +
                                                     " fall outside total_q/total_k or exceed the maximum lengths");
      break;
    }
    if (lq == 0) continue;
    Flash_fwd_params params{};
    params.q_ptr = static_cast<const char*>(a.q) + element * q_row * cu_q[i];
    params.k_ptr = static_cast<const char*>(a.k) + element * k_row * cu_k[i];
    params.v_ptr = static_cast<const char*>(a.v) + element * k_row * cu_k[i];
    params.o_ptr = static_cast<char*>(a.out) + element * q_row * cu_q[i];
    params.softmax_lse_ptr = lse;
    params.q_row_stride = params.o_row_stride = q_row;
    params.k_row_stride = params.v_row_stride = k_row;
    params.q_head_stride = params.k_head_stride = params.v_head_stride = params.o_head_stride = a.head_dim;
    params.q_batch_stride = params.o_batch_stride = q_row * lq;
    params.k_batch_stride = params.v_batch_stride = k_row * lk;
    params.b = 1;
    params.h = a.num_heads;
    params.h_k = a.num_heads_k;
    params.h_h_k_ratio = a.num_heads / a.num_heads_k;
    params.seqlen_q = lq;
    params.seqlen_k = lk;
    params.d = a.head_dim;
    params.scale_softmax = launch.softmax_scale;
    params.scale_softmax_log2 = launch.softmax_scale * float(M_LOG2E);
    params.is_causal = causal;
    if (lk == 0) {  // no keys: zero output, as FlashAttention returns it
      if (cudaError_t e = cudaMemsetAsync(params.o_ptr, 0, element * q_row * lq, launch.stream); e != cudaSuccess) {
        status = cuda_failed(e, "cudaMemsetAsync");
      }
      continue;
    }
    if (!run(params, a.dtype, rounded, launch.stream)) {
      status = fail(FLASH_ATTN_NOT_BUILT, "no kernel for this dtype and head dim in this build");
    } else if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
      status = cuda_failed(e, "the forward kernel's launch");
    } else if (cudaError_t c =
                   cudaMemcpy2DAsync(a.softmax_lse + cu_q[i], sizeof(float) * a.total_q, lse, sizeof(float) * lq,
                                     sizeof(float) * lq, a.num_heads, cudaMemcpyDeviceToDevice, launch.stream);
               c != cudaSuccess) {
      status = cuda_failed(c, "copying the LSE");
    }
  }
  if (status == FLASH_ATTN_OK) {
    if (cudaError_t e = replace_floats(a.softmax_lse, a.softmax_lse, lse_count, INFINITY, -INFINITY, launch.stream);
        e != cudaSuccess) {
      status = cuda_failed(e, "the LSE of rows without keys");
    }
  }
  if (cudaError_t e = cudaFreeAsync(lse, launch.stream); e != cudaSuccess && status == FLASH_ATTN_OK) {
    status = cuda_failed(e, "cudaFreeAsync of the LSE buffer");
  }
  return status;
}

}  // namespace flash_attn_lib
