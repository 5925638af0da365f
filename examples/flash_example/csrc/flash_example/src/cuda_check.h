// The kernel launch check of the kernel translation units, chosen by the build (as
// FlashAttention 2's csrc/flash_attn/src/cuda_check.h chooses it).
//
// The stable-ABI build (setup.py defines TORCH_TARGET_VERSION for it) must reference no c10 C++
// symbol, or the wheel would load only under the torch it was built with. It takes torch's
// header-only check, which formats c10's message through a C function of the stable shim (it
// needs USE_CUDA, which setup.py defines with TORCH_TARGET_VERSION). The default build keeps
// c10's macro, so its objects are what they were.
#pragma once

#include <cuda_runtime.h>

#ifdef TORCH_TARGET_VERSION
#include <torch/csrc/stable/macros.h>
#define FLASH_EXAMPLE_KERNEL_LAUNCH_CHECK() STD_CUDA_KERNEL_LAUNCH_CHECK()
#else
#include <c10/cuda/CUDAException.h>
#define FLASH_EXAMPLE_KERNEL_LAUNCH_CHECK() C10_CUDA_KERNEL_LAUNCH_CHECK()
#endif
