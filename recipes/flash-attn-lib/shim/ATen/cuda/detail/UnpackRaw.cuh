// Stands in for torch's ATen/cuda/detail/UnpackRaw.cuh in a torch-free build: FlashAttention 2's
// forward kernel reads the dropout seed and offset with at::cuda::philox::unpack (through its
// philox_unpack.cuh), in code that the library's builds never run (no dropout; see
// CUDAGeneratorImpl.h beside this file).
#pragma once

#include <cstdint>
#include <tuple>

#include "ATen/cuda/CUDAGeneratorImpl.h"

namespace at::cuda::philox {

__host__ __device__ __forceinline__ std::tuple<uint64_t, uint64_t> unpack(at::PhiloxCudaState state) {
  return std::make_tuple(state.seed_, state.offset_);
}

}  // namespace at::cuda::philox
