// The only translation unit that includes Python/pybind headers (like flash_api.cpp); the
// stable-ABI build compiles api_stable.cpp in its place.
// Exposes flash_example_cuda.fwd(q, k, v, causal, softmax_scale) -> [out, softmax_lse].

#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <cmath>
#include <limits>
#include <vector>

#include "flash.h"
#include "mha_fwd_host.h"

#define CHECK_DEVICE(x) TORCH_CHECK(x.is_cuda(), #x " must be on CUDA")
#define CHECK_SHAPE(x, ...) \
    TORCH_CHECK(x.sizes() == torch::IntArrayRef({__VA_ARGS__}), #x " must have shape (" #__VA_ARGS__ ")")

namespace flash_example {

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

    Flash_fwd_params params = fwd_params(q, k, v, out, softmax_lse, num_heads_k, is_causal, softmax_scale);
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
