/* flash_attn.h: the C API of libflash_attn, FlashAttention's forward kernels without torch or
 * Python, as fabuild's library cells build it (recipes/flash-attn-lib, docs/library.md).
 *
 * One entry point: variable-length ("varlen") forward attention over packed sequences, as
 * flash_attn_varlen_func computes it. All pointers are device pointers on the current device;
 * the call is asynchronous on `stream` and returns once the kernels are queued.
 *
 *   q        [total_q, num_heads,   head_dim]  contiguous
 *   k, v     [total_k, num_heads_k, head_dim]  contiguous (num_heads % num_heads_k == 0: GQA/MQA)
 *   out      [total_q, num_heads,   head_dim]  contiguous, the input's type (bf16 for e4m3 input)
 *   softmax_lse [num_heads, total_q] float: log-sum-exp of each row's scores (scaled)
 *   cu_seqlens_q, cu_seqlens_k  int32 [batch + 1]: sequence i is rows cu[i] .. cu[i+1]-1
 *
 * Causal masking is aligned to the bottom right, as FlashAttention aligns it when a sequence
 * has fewer queries than keys.
 */
#ifndef FLASH_ATTN_FLASH_ATTN_H_
#define FLASH_ATTN_FLASH_ATTN_H_

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(FLASH_ATTN_BUILDING)
#define FLASH_ATTN_API __declspec(dllexport)
#elif defined(_WIN32)
#define FLASH_ATTN_API __declspec(dllimport)
#else
#define FLASH_ATTN_API __attribute__((visibility("default")))
#endif

typedef enum flash_attn_dtype {
  FLASH_ATTN_FP16 = 0,
  FLASH_ATTN_BF16 = 1,
  FLASH_ATTN_E4M3 = 2 /* FlashAttention 3 on sm90 only; out is bf16 */
} flash_attn_dtype;

typedef enum flash_attn_status {
  FLASH_ATTN_OK = 0,
  FLASH_ATTN_INVALID_ARGUMENT = 1, /* a null pointer, a negative size, heads that do not divide */
  FLASH_ATTN_NOT_BUILT = 2,        /* this build has no kernel for the dtype, head dim or GPU */
  FLASH_ATTN_CUDA_ERROR = 3        /* a CUDA call failed (the message names it) */
} flash_attn_status;

typedef struct flash_attn_varlen_fwd_args {
  flash_attn_dtype dtype;
  const void* q;
  const void* k;
  const void* v;
  void* out;
  float* softmax_lse;
  const int* cu_seqlens_q;
  const int* cu_seqlens_k;
  int batch;
  int total_q;
  int total_k;
  int max_seqlen_q;
  int max_seqlen_k;
  int num_heads;
  int num_heads_k;
  int head_dim;
  float softmax_scale; /* 0: 1 / sqrt(head_dim) */
  int causal;          /* nonzero: causal */
} flash_attn_varlen_fwd_args;

/* Queues the forward pass on `stream` (0: the default stream). */
FLASH_ATTN_API flash_attn_status flash_attn_varlen_fwd(const flash_attn_varlen_fwd_args* args, cudaStream_t stream);

/* Why the last call on this thread did not return FLASH_ATTN_OK ("" after a success). */
FLASH_ATTN_API const char* flash_attn_last_error(void);

/* What this library was built from and with: "fa3 3.0.0, archs 90, head dims 64 128, bf16 fp16,
 * profile minimal" (the flavour, the source's version, and what the profile left). */
FLASH_ATTN_API const char* flash_attn_build_info(void);

/* Whether this build has a kernel for (dtype, head_dim) on a GPU of compute capability
 * major*10+minor. */
FLASH_ATTN_API int flash_attn_supports(flash_attn_dtype dtype, int head_dim, int compute_capability);

#ifdef __cplusplus
}
#endif

#endif /* FLASH_ATTN_FLASH_ATTN_H_ */
