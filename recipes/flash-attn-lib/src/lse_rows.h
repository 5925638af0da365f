// The log-sum-exp of a row that sees no key, as the C API promises it (-INFINITY, the log of an
// empty sum), where a flavour's kernels write +INFINITY instead (FlashAttention 2's and the
// example's; lse_rows.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace flash_attn_lib {

// out[i] = in[i] == from ? to : in[i] for i < n (in == out: in place). Queued on `stream`.
cudaError_t replace_floats(const float* in, float* out, int64_t n, float from, float to, cudaStream_t stream);

// p[i] = value for i < n. Queued on `stream`.
cudaError_t fill_floats(float* p, int64_t n, float value, cudaStream_t stream);

}  // namespace flash_attn_lib
