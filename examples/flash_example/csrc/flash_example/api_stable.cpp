// The API source of the stable-ABI build (FLASH_EXAMPLE_STABLE_ABI=TRUE, torch >= 2.10), in
// api.cpp's place, as FlashAttention 2's stable port rewrote flash_api.cpp.
// Registers torch.ops.flash_example.fwd(q, k, v, causal, softmax_scale) -> [out, softmax_lse],
// the op api.cpp exposes through pybind, with the same checks and results.
//
// Why another file: the wheel must load under every torch from 2.10 on and under every CPython
// from 3.10 on (cp310-abi3). So it includes no pybind, no Python.h and no ATen/c10 C++ header,
// and reaches torch only through torch::stable and the C shim, which setup.py pins to the 2.10
// surface with TORCH_TARGET_VERSION. Without a Python module the op is found through the
// dispatcher, by torch.ops.load_library (flash_attn_interface.py).

#include <torch/csrc/stable/accelerator.h>  // DeviceGuard
#include <torch/csrc/stable/library.h>      // STABLE_TORCH_LIBRARY, TORCH_BOX
#include <torch/csrc/stable/ops.h>          // new_empty, zero_, fill_
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>   // STD_TORCH_CHECK
#include <torch/headeronly/util/shim_utils.h>  // TORCH_ERROR_CODE_CHECK
// aoti_torch_get_current_cuda_stream, declared only under USE_CUDA (setup.py defines it).
#include <torch/csrc/inductor/aoti_torch/c/shim.h>

#include <cuda_runtime_api.h>

#include <limits>
#include <vector>

#include "flash.h"
#include "mha_fwd_host.h"

// STD_TORCH_CHECK expands to a bare `if`: use these as whole statements only.
#define CHECK_DEVICE(x) STD_TORCH_CHECK(x.is_cuda(), #x " must be on CUDA")
#define CHECK_SHAPE(x, ...) \
    STD_TORCH_CHECK(x.sizes().equals({__VA_ARGS__}), #x " must have shape (" #__VA_ARGS__ ")")

namespace flash_example {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

// at::cuda::getCurrentCUDAStream() is a c10 C++ symbol; the shim hands out the same stream.
static cudaStream_t current_cuda_stream(const Tensor &t) {
    void *stream = nullptr;
    TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(t.get_device_index(), &stream));
    return static_cast<cudaStream_t>(stream);
}

std::vector<Tensor> mha_fwd(const Tensor &q,  // batch_size x seqlen_q x num_heads x head_size
                            const Tensor &k,  // batch_size x seqlen_k x num_heads_k x head_size
                            const Tensor &v,  // batch_size x seqlen_k x num_heads_k x head_size
                            bool is_causal,
                            double softmax_scale) {
#ifdef FLASHATTENTION_DISABLE_CAUSAL
    STD_TORCH_CHECK(!is_causal, "This flash_example build does not support causal attention "
                                "(built with FLASHATTENTION_DISABLE_CAUSAL: the 'minimal' profile)");
#endif
    const ScalarType q_dtype = q.scalar_type();
    STD_TORCH_CHECK(q_dtype == ScalarType::Half || q_dtype == ScalarType::BFloat16,
                    "flash_example only supports fp16 and bf16 data types");
    STD_TORCH_CHECK(k.scalar_type() == q_dtype, "query and key must have the same dtype");
    STD_TORCH_CHECK(v.scalar_type() == q_dtype, "query and value must have the same dtype");
    CHECK_DEVICE(q); CHECK_DEVICE(k); CHECK_DEVICE(v);
    STD_TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "q, k, v must be 4-D [b, s, h, d]");
    STD_TORCH_CHECK(q.stride(-1) == 1, "Input tensor must have contiguous last dimension");
    STD_TORCH_CHECK(k.stride(-1) == 1, "Input tensor must have contiguous last dimension");
    STD_TORCH_CHECK(v.stride(-1) == 1, "Input tensor must have contiguous last dimension");

    const int batch_size = q.size(0);
    const int seqlen_q = q.size(1);
    const int num_heads = q.size(2);
    const int head_size = q.size(3);
    const int seqlen_k = k.size(1);
    const int num_heads_k = k.size(2);
    STD_TORCH_CHECK(batch_size > 0, "batch size must be positive");
    STD_TORCH_CHECK(head_size > 0 && head_size <= 128, "flash_example supports head dimension at most 128");
    STD_TORCH_CHECK(num_heads_k > 0 && num_heads % num_heads_k == 0,
                    "Number of heads in key/value must divide number of heads in query");
    CHECK_SHAPE(k, batch_size, seqlen_k, num_heads_k, head_size);
    CHECK_SHAPE(v, batch_size, seqlen_k, num_heads_k, head_size);

    // Otherwise the kernels would run on the current device, not q's.
    torch::stable::accelerator::DeviceGuard device_guard(q.get_device_index());

    // new_empty, unlike the stable empty_like, is contiguous whatever q's strides (api.cpp asks
    // empty_like for MemoryFormat::Contiguous); the kernels index out with its own strides anyway.
    Tensor out = torch::stable::new_empty(q, {batch_size, seqlen_q, num_heads, head_size});
    Tensor softmax_lse = torch::stable::new_empty(q, {batch_size, num_heads, seqlen_q}, ScalarType::Float);
    if (seqlen_q == 0) return {out, softmax_lse};
    if (seqlen_k == 0) {
        torch::stable::zero_(out);
        torch::stable::fill_(softmax_lse, std::numeric_limits<float>::infinity());
        return {out, softmax_lse};
    }

    Flash_fwd_params params = fwd_params(q, k, v, out, softmax_lse, num_heads_k, is_causal, softmax_scale);
    run_mha_fwd(params, q_dtype == ScalarType::BFloat16, current_cuda_stream(q));
    return {out, softmax_lse};
}

}  // namespace flash_example

// The schema keeps the pybind defaults (causal=False, softmax_scale=1.0).
STABLE_TORCH_LIBRARY(flash_example, m) {
    m.def("fwd(Tensor q, Tensor k, Tensor v, bool causal=False, float softmax_scale=1.0) -> Tensor[]");
}

// CUDA only, as api.cpp refuses tensors elsewhere: the dispatcher itself then refuses CPU
// tensors, before mha_fwd runs.
STABLE_TORCH_LIBRARY_IMPL(flash_example, CUDA, m) {
    m.impl("fwd", TORCH_BOX(&flash_example::mha_fwd));
}
