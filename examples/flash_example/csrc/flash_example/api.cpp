// The only translation unit that includes Python/pybind headers (like flash_api.cpp).
// Exposes flash_example_cuda.fwd(q, k, v, causal, softmax_scale) -> [out, softmax_lse].

#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <cmath>
#include <limits>
#include <vector>

#include "flash.h"

#define CHECK_DEVICE(x) TORCH_CHECK(x.is_cuda(), #x " must be on CUDA")
#define CHECK_SHAPE(x, ...) \
    TORCH_CHECK(x.sizes() == torch::IntArrayRef({__VA_ARGS__}), #x " must have shape (" #__VA_ARGS__ ")")

namespace flash_example {

template <typename T, bool Is_causal>
static void run_mha_fwd_hdim(Flash_fwd_params &params, cudaStream_t stream) {
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

static void run_mha_fwd(Flash_fwd_params &params, bool is_bf16, cudaStream_t stream) {
    if (is_bf16) {
        if (params.is_causal) run_mha_fwd_hdim<bf16_t, true>(params, stream);
        else run_mha_fwd_hdim<bf16_t, false>(params, stream);
    } else {
        if (params.is_causal) run_mha_fwd_hdim<fp16_t, true>(params, stream);
        else run_mha_fwd_hdim<fp16_t, false>(params, stream);
    }
}

std::vector<at::Tensor> mha_fwd(const at::Tensor &q,  // batch_size x seqlen_q x num_heads x head_size
                                const at::Tensor &k,  // batch_size x seqlen_k x num_heads_k x head_size
                                const at::Tensor &v,  // batch_size x seqlen_k x num_heads_k x head_size
                                bool is_causal,
                                double softmax_scale) {
#ifdef FLASHATTENTION_DISABLE_CAUSAL
    TORCH_CHECK(!is_causal, "This flash_example build does not support causal attention "
                            "(built with FLASHATTENTION_DISABLE_CAUSAL: the 'minimal' profile)");
#endif
    auto q_dtype = q.dtype();
    TORCH_CHECK(q_dtype == torch::kFloat16 || q_dtype == torch::kBFloat16,
                "flash_example only supports fp16 and bf16 data types");
    TORCH_CHECK(k.dtype() == q_dtype, "query and key must have the same dtype");
    TORCH_CHECK(v.dtype() == q_dtype, "query and value must have the same dtype");
    CHECK_DEVICE(q); CHECK_DEVICE(k); CHECK_DEVICE(v);
    TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "q, k, v must be 4-D [b, s, h, d]");
    TORCH_CHECK(q.stride(-1) == 1, "Input tensor must have contiguous last dimension");
    TORCH_CHECK(k.stride(-1) == 1, "Input tensor must have contiguous last dimension");
    TORCH_CHECK(v.stride(-1) == 1, "Input tensor must have contiguous last dimension");

    const int batch_size = q.size(0);
    const int seqlen_q = q.size(1);
    const int num_heads = q.size(2);
    const int head_size = q.size(3);
    const int seqlen_k = k.size(1);
    const int num_heads_k = k.size(2);
    TORCH_CHECK(batch_size > 0, "batch size must be positive");
    TORCH_CHECK(head_size > 0 && head_size <= 128, "flash_example supports head dimension at most 128");
    TORCH_CHECK(num_heads_k > 0 && num_heads % num_heads_k == 0,
                "Number of heads in key/value must divide number of heads in query");
    CHECK_SHAPE(k, batch_size, seqlen_k, num_heads_k, head_size);
    CHECK_SHAPE(v, batch_size, seqlen_k, num_heads_k, head_size);

    at::cuda::CUDAGuard device_guard{q.device()};

    auto out = torch::empty_like(q, at::MemoryFormat::Contiguous);
    auto softmax_lse = torch::empty({batch_size, num_heads, seqlen_q}, q.options().dtype(at::kFloat));
    if (seqlen_q == 0) return {out, softmax_lse};
    if (seqlen_k == 0) {
        out.zero_();
        softmax_lse.fill_(std::numeric_limits<float>::infinity());
        return {out, softmax_lse};
    }

    Flash_fwd_params params{};
    params.q_ptr = q.data_ptr();
    params.k_ptr = k.data_ptr();
    params.v_ptr = v.data_ptr();
    params.o_ptr = out.data_ptr();
    params.softmax_lse_ptr = softmax_lse.data_ptr<float>();
    params.q_batch_stride = q.stride(0); params.q_row_stride = q.stride(1); params.q_head_stride = q.stride(2);
    params.k_batch_stride = k.stride(0); params.k_row_stride = k.stride(1); params.k_head_stride = k.stride(2);
    params.v_batch_stride = v.stride(0); params.v_row_stride = v.stride(1); params.v_head_stride = v.stride(2);
    params.o_batch_stride = out.stride(0); params.o_row_stride = out.stride(1); params.o_head_stride = out.stride(2);
    params.b = batch_size;
    params.h = num_heads;
    params.h_k = num_heads_k;
    params.h_h_k_ratio = num_heads / num_heads_k;
    params.seqlen_q = seqlen_q;
    params.seqlen_k = seqlen_k;
    params.d = head_size;
    params.scale_softmax = static_cast<float>(softmax_scale);
    params.scale_softmax_log2 = static_cast<float>(softmax_scale * M_LOG2E);
    params.is_causal = is_causal;

    auto stream = at::cuda::getCurrentCUDAStream().stream();
    run_mha_fwd(params, q_dtype == torch::kBFloat16, stream);
    return {out, softmax_lse};
}

}  // namespace flash_example

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "flash_example: FlashAttention-shaped example CUDA extension (forward only)";
    m.def("fwd", &flash_example::mha_fwd, "Forward pass",
          pybind11::arg("q"), pybind11::arg("k"), pybind11::arg("v"),
          pybind11::arg("causal") = false, pybind11::arg("softmax_scale") = 1.0);
}
