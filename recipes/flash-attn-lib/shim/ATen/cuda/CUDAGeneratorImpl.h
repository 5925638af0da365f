// Stands in for torch's ATen/cuda/CUDAGeneratorImpl.h in a torch-free build: FlashAttention 2's
// flash.h keeps torch's Philox state (seed and offset) for dropout in Flash_fwd_params. The
// library never asks for dropout (p_dropout is 0, and FLASHATTENTION_DISABLE_DROPOUT compiles its
// kernels out), so only the type is needed: a seed and an offset, never read.
#pragma once

#include <cstdint>

namespace at {

struct PhiloxCudaState {
  uint64_t seed_ = 0;
  uint64_t offset_ = 0;
};

}  // namespace at
