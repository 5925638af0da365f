// The host half of the forward pass that the pybind API (api.cpp) and the stable-ABI API
// (api_stable.cpp) share once their checks have passed: the kernel parameters read from the
// tensors, and which compiled kernel serves the call. Shared so that both builds hand the kernels
// the same parameters and a new head dim is added once.
//
// No torch headers: the tensors come in as a template parameter, since at::Tensor and
// torch::stable::Tensor both offer data_ptr() and stride(dim), and an include here would tie one
// of the two builds to the other's headers.
#pragma once

#include <cmath>

#include "flash.h"

namespace flash_example {

// q, k, v: [batch, seqlen, heads, head_dim], last dim contiguous (checked by the caller);
// out: contiguous, shaped like q; softmax_lse: contiguous fp32 [batch, heads, seqlen_q].
template <typename TensorT>
Flash_fwd_params fwd_params(const TensorT &q, const TensorT &k, const TensorT &v, const TensorT &out,
                            const TensorT &softmax_lse, int num_heads_k, bool is_causal,
                            double softmax_scale) {
    Flash_fwd_params params{};
    params.q_ptr = q.data_ptr();
    params.k_ptr = k.data_ptr();
    params.v_ptr = v.data_ptr();
    params.o_ptr = out.data_ptr();
    params.softmax_lse_ptr = static_cast<float *>(softmax_lse.data_ptr());
    params.q_batch_stride = q.stride(0); params.q_row_stride = q.stride(1); params.q_head_stride = q.stride(2);
    params.k_batch_stride = k.stride(0); params.k_row_stride = k.stride(1); params.k_head_stride = k.stride(2);
    params.v_batch_stride = v.stride(0); params.v_row_stride = v.stride(1); params.v_head_stride = v.stride(2);
    params.o_batch_stride = out.stride(0); params.o_row_stride = out.stride(1); params.o_head_stride = out.stride(2);
    params.b = q.size(0);
    params.seqlen_q = q.size(1);
    params.h = q.size(2);
    params.d = q.size(3);
    params.seqlen_k = k.size(1);
    params.h_k = num_heads_k;
    params.h_h_k_ratio = params.h / num_heads_k;
    params.scale_softmax = static_cast<float>(softmax_scale);
    params.scale_softmax_log2 = static_cast<float>(softmax_scale * M_LOG2E);
    params.is_causal = is_causal;
    return params;
}

template <typename T, bool Is_causal>
inline void run_mha_fwd_hdim(Flash_fwd_params &params, cudaStream_t stream) {
    // Round the head dim up to a compiled kernel, as FlashAttention does.
    if (params.d <= 32) {
        run_mha_fwd_<T, 32, Is_causal>(params, stream);
    } else if (params.d <= 64) {
        run_mha_fwd_<T, 64, Is_causal>(params, stream);
    } else if (params.d <= 96) {
        run_mha_fwd_<T, 96, Is_causal>(params, stream);
    } else {
        run_mha_fwd_<T, 128, Is_causal>(params, stream);
    }
}

inline void run_mha_fwd(Flash_fwd_params &params, bool is_bf16, cudaStream_t stream) {
    if (is_bf16) {
        if (params.is_causal) run_mha_fwd_hdim<bf16_t, true>(params, stream);
        else run_mha_fwd_hdim<bf16_t, false>(params, stream);
    } else {
        if (params.is_causal) run_mha_fwd_hdim<fp16_t, true>(params, stream);
        else run_mha_fwd_hdim<fp16_t, false>(params, stream);
    }
}

}  // namespace flash_example
