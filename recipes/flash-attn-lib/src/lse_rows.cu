// The LSE fix-ups of lse_rows.h: one thread per float.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "lse_rows.h"

namespace flash_attn_lib {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

__global__ void replace_kernel(const float* in, float* out, int64_t n, float from, float to) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] == from ? to : in[i];
}

__global__ void fill_kernel(float* p, int64_t n, float value) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

}  // namespace

cudaError_t replace_floats(const float* in, float* out, int64_t n, float from, float to, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  replace_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, n, from, to);
  return cudaGetLastError();
}

cudaError_t fill_floats(float* p, int64_t n, float value, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(p, n, value);
  return cudaGetLastError();
}

}  // namespace flash_attn_lib
