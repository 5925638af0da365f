// A straightforward (not fast) attention forward kernel with an online softmax.
//
// Grid: (ceil(seqlen_q / kBlockM), heads, batch). Block: kNWarps warps. Each warp owns
// kRowsPerWarp query rows of the block's query tile. K and V are streamed through shared
// memory in tiles of kBlockN keys. For each query row, lane l computes the scores of keys
// l, l+32, ... of the tile (full dot product over the head dim), the row max/sum are warp
// reductions, and the output accumulator is split across lanes by head-dim column
// (lane l owns columns l, l+32, ...). All arithmetic is fp32.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cmath>

#include "flash.h"

namespace flash_example {

template <typename T> struct CudaType;
template <> struct CudaType<fp16_t> {
    using type = __half;
    static __device__ __forceinline__ float to_float(type x) { return __half2float(x); }
    static __device__ __forceinline__ type from_float(float x) { return __float2half_rn(x); }
};
template <> struct CudaType<bf16_t> {
    using type = __nv_bfloat16;
    static __device__ __forceinline__ float to_float(type x) { return __bfloat162float(x); }
    static __device__ __forceinline__ type from_float(float x) { return __float2bfloat16_rn(x); }
};

template <int kHeadDim_>
struct Fwd_kernel_traits {
    static constexpr int kHeadDim = kHeadDim_;
    static_assert(kHeadDim % 32 == 0, "head dim must be a multiple of 32");
    static constexpr int kNWarps = 4;
    static constexpr int kNThreads = kNWarps * 32;
    static constexpr int kRowsPerWarp = 4;
    static constexpr int kBlockM = kNWarps * kRowsPerWarp;      // query rows per block
    static constexpr int kBlockN = 64;                          // keys per K/V tile
    static constexpr int kKeysPerLane = kBlockN / 32;
    static constexpr int kColsPerLane = kHeadDim / 32;
    // +2 elements of padding: the row stride in 32-bit words becomes odd, so lane l reading
    // row l of the K tile hits a distinct bank.
    static constexpr int kSmemRowStride = kHeadDim + 2;
    template <typename Elem>
    static constexpr int smem_bytes() {
        return kBlockM * kHeadDim * int(sizeof(float)) + 2 * kBlockN * kSmemRowStride * int(sizeof(Elem));
    }
};

__device__ __forceinline__ float warp_reduce_max(float x) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
    return x;
}

__device__ __forceinline__ float warp_reduce_sum(float x) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
}

template <typename Kernel_traits, typename Tag, bool Is_causal>
__global__ void __launch_bounds__(Kernel_traits::kNThreads)
flash_fwd_kernel(const Flash_fwd_params params) {
    using Conv = CudaType<Tag>;
    using Element = typename Conv::type;
    constexpr int kHeadDim = Kernel_traits::kHeadDim;
    constexpr int kBlockM = Kernel_traits::kBlockM;
    constexpr int kBlockN = Kernel_traits::kBlockN;
    constexpr int kRowsPerWarp = Kernel_traits::kRowsPerWarp;
    constexpr int kKeysPerLane = Kernel_traits::kKeysPerLane;
    constexpr int kColsPerLane = Kernel_traits::kColsPerLane;
    constexpr int kNThreads = Kernel_traits::kNThreads;
    constexpr int kStride = Kernel_traits::kSmemRowStride;

    __shared__ float sQ[kBlockM][kHeadDim];  // pre-scaled by softmax_scale * log2(e)
    __shared__ Element sK[kBlockN][kStride];
    __shared__ Element sV[kBlockN][kStride];

    const int m_block = blockIdx.x;
    const int bidh = blockIdx.y;
    const int bidb = blockIdx.z;
    const int bidh_k = bidh / params.h_h_k_ratio;
    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int d = params.d;
    const int seqlen_q = params.seqlen_q;
    const int seqlen_k = params.seqlen_k;

    const Element *q = reinterpret_cast<const Element *>(params.q_ptr)
        + bidb * params.q_batch_stride + bidh * params.q_head_stride;
    const Element *k = reinterpret_cast<const Element *>(params.k_ptr)
        + bidb * params.k_batch_stride + bidh_k * params.k_head_stride;
    const Element *v = reinterpret_cast<const Element *>(params.v_ptr)
        + bidb * params.v_batch_stride + bidh_k * params.v_head_stride;
    Element *o = reinterpret_cast<Element *>(params.o_ptr)
        + bidb * params.o_batch_stride + bidh * params.o_head_stride;
    float *lse = params.softmax_lse_ptr + (int64_t(bidb) * params.h + bidh) * seqlen_q;

    // Load the query tile (zero beyond seqlen_q and beyond the actual head dim).
    for (int i = tid; i < kBlockM * kHeadDim; i += kNThreads) {
        const int r = i / kHeadDim, c = i % kHeadDim;
        const int row = m_block * kBlockM + r;
        float x = 0.f;
        if (row < seqlen_q && c < d) x = Conv::to_float(q[row * params.q_row_stride + c]);
        sQ[r][c] = x * params.scale_softmax_log2;
    }

    // Keys a query row may see: all of them, or (causal, bottom-right aligned like FA2)
    // keys j <= row + seqlen_k - seqlen_q.
    int n_end = seqlen_k;
    if (Is_causal) {
        const int last_row = min((m_block + 1) * kBlockM, seqlen_q) - 1;
        n_end = max(0, min(seqlen_k, last_row + seqlen_k - seqlen_q + 1));
    }
    const int n_block_max = (n_end + kBlockN - 1) / kBlockN;

    float row_max[kRowsPerWarp];
    float row_sum[kRowsPerWarp];
    float acc[kRowsPerWarp][kColsPerLane];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
        row_max[r] = -INFINITY;
        row_sum[r] = 0.f;
#pragma unroll
        for (int c = 0; c < kColsPerLane; ++c) acc[r][c] = 0.f;
    }

    for (int n_block = 0; n_block < n_block_max; ++n_block) {
        __syncthreads();  // previous tile fully consumed (and sQ written, first time round)
        for (int i = tid; i < kBlockN * kHeadDim; i += kNThreads) {
            const int r = i / kHeadDim, c = i % kHeadDim;
            const int key = n_block * kBlockN + r;
            Element kx = Conv::from_float(0.f), vx = Conv::from_float(0.f);
            if (key < seqlen_k && c < d) {
                kx = k[key * params.k_row_stride + c];
                vx = v[key * params.v_row_stride + c];
            }
            sK[r][c] = kx;
            sV[r][c] = vx;
        }
        __syncthreads();

#pragma unroll
        for (int rr = 0; rr < kRowsPerWarp; ++rr) {
            const int r = warp * kRowsPerWarp + rr;
            const int row = m_block * kBlockM + r;
            if (row >= seqlen_q) continue;  // warp-uniform
            const int key_limit = Is_causal ? min(seqlen_k, row + seqlen_k - seqlen_q + 1) : seqlen_k;

            float s[kKeysPerLane];
            float tile_max = -INFINITY;
#pragma unroll
            for (int j = 0; j < kKeysPerLane; ++j) {
                const int kr = lane + 32 * j;
                const int key = n_block * kBlockN + kr;
                float dot = 0.f;
#pragma unroll 8
                for (int c = 0; c < kHeadDim; ++c) dot += sQ[r][c] * Conv::to_float(sK[kr][c]);
                s[j] = key < key_limit ? dot : -INFINITY;
                tile_max = fmaxf(tile_max, s[j]);
            }
            tile_max = warp_reduce_max(tile_max);
            const float m_new = fmaxf(row_max[rr], tile_max);
            if (m_new == -INFINITY) continue;  // nothing visible yet for this row (warp-uniform)
            const float correction = exp2f(row_max[rr] - m_new);  // exp2(-inf) == 0
            float p_sum = 0.f;
#pragma unroll
            for (int j = 0; j < kKeysPerLane; ++j) {
                s[j] = exp2f(s[j] - m_new);
                p_sum += s[j];
            }
            p_sum = warp_reduce_sum(p_sum);
            row_sum[rr] = row_sum[rr] * correction + p_sum;
            row_max[rr] = m_new;
#pragma unroll
            for (int c = 0; c < kColsPerLane; ++c) acc[rr][c] *= correction;
#pragma unroll
            for (int j = 0; j < kKeysPerLane; ++j) {
#pragma unroll 4
                for (int src = 0; src < 32; ++src) {
                    const float p = __shfl_sync(0xffffffffu, s[j], src);
                    const int kr = src + 32 * j;
#pragma unroll
                    for (int c = 0; c < kColsPerLane; ++c)
                        acc[rr][c] += p * Conv::to_float(sV[kr][lane + 32 * c]);
                }
            }
        }
    }

    // Epilogue: normalise and write O and the log-sum-exp (natural log, unscaled scores).
#pragma unroll
    for (int rr = 0; rr < kRowsPerWarp; ++rr) {
        const int row = m_block * kBlockM + warp * kRowsPerWarp + rr;
        if (row >= seqlen_q) continue;
        const bool empty = row_sum[rr] == 0.f;  // fully masked row: output 0, lse +inf (as FA2)
        const float inv = empty ? 0.f : 1.f / row_sum[rr];
#pragma unroll
        for (int c = 0; c < kColsPerLane; ++c) {
            const int col = lane + 32 * c;
            if (col < d) o[row * params.o_row_stride + col] = Conv::from_float(acc[rr][c] * inv);
        }
        if (lane == 0) {
            lse[row] = empty ? INFINITY
                             : (row_max[rr] + log2f(row_sum[rr])) * float(M_LN2);
        }
    }
}

}  // namespace flash_example
