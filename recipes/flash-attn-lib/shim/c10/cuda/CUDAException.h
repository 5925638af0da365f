// Stands in for torch's c10/cuda/CUDAException.h in a torch-free build: FlashAttention 2's
// flash_fwd_launch_template.h and the example's launch template check their CUDA calls and
// kernel launches with C10_CUDA_CHECK and C10_CUDA_KERNEL_LAUNCH_CHECK. As torch's, a failure
// throws; the C API (src/c_api.cpp) catches it and returns FLASH_ATTN_CUDA_ERROR with the message.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace flash_attn_lib {

[[noreturn]] inline void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(error) + " (" + file + ":" +
                           std::to_string(line) + ")");
}

}  // namespace flash_attn_lib

#define C10_CUDA_CHECK(EXPR)                                                                \
  do {                                                                                      \
    const cudaError_t flash_attn_lib_error_ = (EXPR);                                       \
    if (flash_attn_lib_error_ != cudaSuccess)                                               \
      ::flash_attn_lib::throw_cuda_error(flash_attn_lib_error_, #EXPR, __FILE__, __LINE__); \
  } while (0)

#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
