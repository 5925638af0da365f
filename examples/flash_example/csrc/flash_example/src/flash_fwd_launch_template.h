// Launch helper, included by every flash_fwd_hdim*_*.cu translation unit.
// Includes CUDA headers and c10's or torch's stable launch check only (no Python headers), like
// FlashAttention's kernels.
#pragma once

#include "cuda_check.h"  // FLASH_EXAMPLE_KERNEL_LAUNCH_CHECK
#include "flash.h"
#include "flash_fwd_kernel.cuh"

namespace flash_example {

template <typename Tag, int Headdim, bool Is_causal>
void run_flash_fwd(Flash_fwd_params &params, cudaStream_t stream) {
#ifdef FLASHATTENTION_DISABLE_CAUSAL
    // As FlashAttention's FLASHATTENTION_DISABLE_* switches do: the kernel is not compiled at
    // all, and the API refuses the case (api.cpp).
    if constexpr (Is_causal) {
        return;
    } else
#endif
    {
    using Kernel_traits = Fwd_kernel_traits<Headdim>;
    static_assert(Kernel_traits::template smem_bytes<typename CudaType<Tag>::type>() <= 48 * 1024,
                  "static shared memory limit");
    const int num_m_block = (params.seqlen_q + Kernel_traits::kBlockM - 1) / Kernel_traits::kBlockM;
    dim3 grid(num_m_block, params.h, params.b);
    flash_fwd_kernel<Kernel_traits, Tag, Is_causal><<<grid, Kernel_traits::kNThreads, 0, stream>>>(params);
    FLASH_EXAMPLE_KERNEL_LAUNCH_CHECK();
    }
}

}  // namespace flash_example
