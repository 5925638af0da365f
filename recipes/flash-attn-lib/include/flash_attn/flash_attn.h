/* flash_attn.h: the C API of libflash_attn, FlashAttention's kernels without torch or Python,
 * as fabuild's library cells build it (recipes/flash-attn-lib, docs/library.md).
 *
 * Variable-length ("varlen") attention over packed sequences, as flash_attn_varlen_func
 * computes it: the forward pass, over packed keys or a paged KV cache, optionally split along
 * the keys (split-KV) and combined; and the backward pass. What a build has depends on its
 * profile: flash_attn_capabilities() says. All pointers are device pointers on the current
 * device; a call is asynchronous on `stream` and returns once the kernels are queued.
 *
 *   q        [total_q, num_heads,   head_dim]  contiguous
 *   k, v     [total_k, num_heads_k, head_dim]  contiguous (num_heads % num_heads_k == 0: GQA/MQA)
 *   out      [total_q, num_heads,   head_dim]  contiguous, the input's type (bf16 for e4m3 input)
 *   softmax_lse [num_heads, total_q] float: log-sum-exp of each row's scores (scaled); a row
 *            that sees no key (causal with more queries than keys, or an empty cache) has
 *            -INFINITY there (the log of an empty sum) and zeros in out, in every flavour
 *   cu_seqlens_q, cu_seqlens_k  int32 [batch + 1]: sequence i is rows cu[i] .. cu[i+1]-1
 *
 * Causal masking is aligned to the bottom right, as FlashAttention aligns it when a sequence
 * has fewer queries than keys.
 */
#ifndef FLASH_ATTN_FLASH_ATTN_H_
#define FLASH_ATTN_FLASH_ATTN_H_

#include <cuda_runtime_api.h>

/* The API's version: 2 added the paged KV cache and split-KV fields of flash_attn_varlen_fwd_args,
 * flash_attn_varlen_bwd and flash_attn_capabilities; 3 made num_splits 0 the library's choice,
 * added flash_attn_varlen_fwd_num_splits, and gave a row without keys an LSE of -INFINITY in
 * FlashAttention 2 as in 3 (+INFINITY before) (libflash_attn.so.3). */
#define FLASH_ATTN_API_VERSION 3

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

  /* A paged KV cache (FLASH_ATTN_CAP_PAGED_KV); block_table NULL: k and v are packed as above.
   * k, v: [num_blocks, page_size, num_heads_k, head_dim]; sequence i's key j is in block
   * block_table[i * max_blocks_per_seq + j / page_size], row j % page_size; its first
   * seqused_k[i] keys are used (cu_seqlens_k and total_k are then ignored). max_seqlen_k is at
   * most max_blocks_per_seq * page_size. FlashAttention 2 needs page_size a multiple of 256. */
  const int* block_table; /* int32 [batch, max_blocks_per_seq] */
  const int* seqused_k;   /* int32 [batch]: the cache's length per sequence */
  int max_blocks_per_seq;
  int page_size;
  int num_blocks;
  /* Split-KV (FLASH_ATTN_CAP_SPLIT_KV): 1 runs the keys in one pass; n > 1 splits each
   * sequence's keys into up to n parts (at most 256) whose results a combine kernel merges: more
   * parallelism for few long sequences (decoding). Scratch memory is allocated on `stream`.
   * 0: the library chooses, as the flavour's source chooses for these arguments on this GPU
   * (FlashAttention 3: its split heuristic from the SM count, the tile sizes and the keys' length,
   * when the build has split-KV; FlashAttention 2: one pass, as its varlen forward pass runs).
   * flash_attn_varlen_fwd_num_splits says what it chose. */
  int num_splits;
} flash_attn_varlen_fwd_args;

/* Queues the forward pass on `stream` (0: the default stream). */
FLASH_ATTN_API flash_attn_status flash_attn_varlen_fwd(const flash_attn_varlen_fwd_args* args, cudaStream_t stream);

/* The number of parts flash_attn_varlen_fwd would split the keys into for `args` on the current
 * device (1: one pass; with num_splits 0, the library's choice; a sequence with few keys may use
 * fewer), after the checks flash_attn_varlen_fwd makes; -1 where it would refuse `args`
 * (flash_attn_last_error says why). Queues nothing. */
FLASH_ATTN_API int flash_attn_varlen_fwd_num_splits(const flash_attn_varlen_fwd_args* args);

/* The backward pass of flash_attn_varlen_fwd over packed keys (FLASH_ATTN_CAP_BACKWARD): from
 * dout and the forward's out and softmax_lse, the gradients dq, dk, dv (the layouts of q, k, v).
 * The other fields mean what they mean for the forward pass; fp16 and bf16 only. */
typedef struct flash_attn_varlen_bwd_args {
  flash_attn_dtype dtype;
  const void* q;
  const void* k;
  const void* v;
  const void* out;
  const void* dout;         /* [total_q, num_heads, head_dim] */
  const float* softmax_lse; /* [num_heads, total_q], as the forward pass wrote it */
  void* dq;                 /* [total_q, num_heads, head_dim] */
  void* dk;                 /* [total_k, num_heads_k, head_dim] */
  void* dv;                 /* [total_k, num_heads_k, head_dim] */
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
  int causal;
  int deterministic; /* nonzero: the same dq on every run (slower); FlashAttention 3 only */
} flash_attn_varlen_bwd_args;

/* Queues the backward pass on `stream`; scratch memory is allocated on `stream`. */
FLASH_ATTN_API flash_attn_status flash_attn_varlen_bwd(const flash_attn_varlen_bwd_args* args, cudaStream_t stream);

/* What the profile compiled beyond the forward pass over packed keys. */
typedef enum flash_attn_capability {
  FLASH_ATTN_CAP_PAGED_KV = 1, /* flash_attn_varlen_fwd with block_table */
  FLASH_ATTN_CAP_SPLIT_KV = 2, /* flash_attn_varlen_fwd with num_splits > 1 */
  FLASH_ATTN_CAP_BACKWARD = 4  /* flash_attn_varlen_bwd */
} flash_attn_capability;

/* The capabilities of this build, or-ed; a call that needs one it lacks returns
 * FLASH_ATTN_NOT_BUILT. */
FLASH_ATTN_API int flash_attn_capabilities(void);

/* FLASH_ATTN_API_VERSION of the library loaded (a program built against another header can check). */
FLASH_ATTN_API int flash_attn_api_version(void);

/* Why the last call on this thread did not return FLASH_ATTN_OK ("" after a success). */
FLASH_ATTN_API const char* flash_attn_last_error(void);

/* What this library was built from and with: "fa3 3.0.0, archs 90, head dims 64 128, bf16 fp16,
 * profile minimal" (the flavour, the source's version, and what the profile left). */
FLASH_ATTN_API const char* flash_attn_build_info(void);

/* Whether this build has a forward kernel for (dtype, head_dim) on a GPU of compute capability
 * major*10+minor (the paged, split and backward kernels exist for the same ones where the
 * capability is built). */
FLASH_ATTN_API int flash_attn_supports(flash_attn_dtype dtype, int head_dim, int compute_capability);

#ifdef __cplusplus
}
#endif

#endif /* FLASH_ATTN_FLASH_ATTN_H_ */
