// dK and dV of grouped heads (GQA/MQA) for a backend whose backward kernel writes them per query
// head (FlashAttention 2's, as its mha_varlen_bwd has them before at::sum_out): each key head's
// gradient is the sum over its group of query heads, accumulated in float.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "head_groups.h"

namespace flash_attn_lib {

namespace {

template <typename T>
__device__ float to_float(T x);
template <>
__device__ float to_float(__half x) {
  return __half2float(x);
}
template <>
__device__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <typename T>
__device__ T from_float(float x);
template <>
__device__ __half from_float(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __nv_bfloat16 from_float(float x) {
  return __float2bfloat16_rn(x);
}

// One thread per element of the output [rows, heads_k, head_dim].
template <typename T>
__global__ void sum_groups(const T* expanded, T* out, int64_t elements, int heads_k, int groups, int head_dim) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= elements) return;
  const int64_t column = i % head_dim, head_k = (i / head_dim) % heads_k, row = i / (int64_t(head_dim) * heads_k);
  const T* first = expanded + (row * heads_k * groups + head_k * groups) * head_dim + column;
  float sum = 0.f;
  for (int g = 0; g < groups; ++g) sum += to_float(first[int64_t(g) * head_dim]);
  out[i] = from_float<T>(sum);
}

}  // namespace

cudaError_t sum_head_groups(bool bf16, const void* expanded, void* out, int rows, int heads_k, int groups,
                            int head_dim, cudaStream_t stream) {
  const int64_t elements = int64_t(rows) * heads_k * head_dim;
  if (elements == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const unsigned blocks = unsigned((elements + kThreads - 1) / kThreads);
  if (bf16) {
    sum_groups<<<blocks, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(expanded),
                                                 static_cast<__nv_bfloat16*>(out), elements, heads_k, groups, head_dim);
  } else {
    sum_groups<<<blocks, kThreads, 0, stream>>>(static_cast<const __half*>(expanded), static_cast<__half*>(out),
                                                 elements, heads_k, groups, head_dim);
  }
  return cudaGetLastError();
}

}  // namespace flash_attn_lib
