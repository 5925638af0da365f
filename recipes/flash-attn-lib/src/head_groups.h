// Sums per-query-head gradients over each key head's group (head_groups.cu).
#pragma once

#include <cuda_runtime_api.h>

namespace flash_attn_lib {

// out [rows, heads_k, head_dim] = sum over g of expanded [rows, heads_k * groups, head_dim] at
// head heads_k_index * groups + g; fp16 or bf16 (bf16 true). Queued on `stream`.
cudaError_t sum_head_groups(bool bf16, const void* expanded, void* out, int rows, int heads_k, int groups, int head_dim,
                            cudaStream_t stream);

}  // namespace flash_attn_lib
