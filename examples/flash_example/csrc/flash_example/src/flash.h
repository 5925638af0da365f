// Parameters and dispatch declarations shared by api.cpp and the kernel TUs.
// Like FlashAttention's csrc/flash_attn/src/flash.h: no Python, no pybind, no torch headers.
#pragma once

#include <cstdint>
#include <cuda_runtime_api.h>

namespace flash_example {

// Element-type tags. The kernels map them to __half / __nv_bfloat16; api.cpp (compiled by
// the host C++ compiler) never needs the CUDA half types.
struct fp16_t {};
struct bf16_t {};

struct Flash_fwd_params {
    using index_t = int64_t;
    // [batch, seqlen, heads, head_dim], last dim contiguous.
    const void *q_ptr;
    const void *k_ptr;
    const void *v_ptr;
    void *o_ptr;
    float *softmax_lse_ptr;  // [batch, heads, seqlen_q], contiguous

    index_t q_batch_stride, q_row_stride, q_head_stride;
    index_t k_batch_stride, k_row_stride, k_head_stride;
    index_t v_batch_stride, v_row_stride, v_head_stride;
    index_t o_batch_stride, o_row_stride, o_head_stride;

    int b, h, h_k, h_h_k_ratio;
    int seqlen_q, seqlen_k;
    int d;                 // actual head dim (<= compiled kHeadDim)
    float scale_softmax;
    float scale_softmax_log2;
    bool is_causal;
};

// One explicit specialisation per (element type, head dim, causal) lives in its own .cu file,
// exactly like FlashAttention's flash_fwd_hdim*_{fp16,bf16}[_causal]_sm80.cu.
template <typename T, int Headdim, bool Is_causal>
void run_mha_fwd_(Flash_fwd_params &params, cudaStream_t stream);

}  // namespace flash_example
