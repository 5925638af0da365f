// libflash_attn against a CPU reference in double: the varlen forward pass in fp16 and bf16, the
// head dims the build has (and one it rounds up to a kernel), causal and not, multi-head and
// grouped (GQA) keys, sequences of uneven lengths in one batch (one with causal rows that see no
// key); and where the build has them (flash_attn_capabilities()), the forward pass over a paged KV
// cache, split-KV, both, and the backward pass; and decoding with num_splits 0 (the library's
// choice: split where the build has split-KV). Each case prints its largest errors.
//
//   flash_attn_varlen_test [--allow-no-device]
//
// Exit 0: every case passed; 1: a case failed; 77: no CUDA device here, or none this build has
// kernels for (0 with --allow-no-device). The C API's argument checks run first, also without
// a device. Built against the installed package: share/flash_attn/test/CMakeLists.txt.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "flash_attn/flash_attn.h"
#include "test_util.h"

namespace {

using flash_attn_test::Case;

constexpr int kSkip = 77;

// The C API refuses bad arguments before it touches a device.
bool check_argument_errors() {
  flash_attn_varlen_fwd_args args{};
  int dummy = 0;
  args.q = args.k = args.v = &dummy;
  args.out = &dummy;
  args.softmax_lse = reinterpret_cast<float*>(&dummy);
  args.cu_seqlens_q = args.cu_seqlens_k = &dummy;
  args.batch = 1;
  args.total_q = args.total_k = args.max_seqlen_q = args.max_seqlen_k = 4;
  args.num_heads = 3;
  args.num_heads_k = 2;
  args.head_dim = 64;
  bool ok = true;
  const auto expect_invalid = [&](const char* what) {
    const flash_attn_status s = flash_attn_varlen_fwd(&args, nullptr);
    const bool refused = s == FLASH_ATTN_INVALID_ARGUMENT && std::strlen(flash_attn_last_error()) > 0;
    std::printf("api: %s: %s (%s)\n", what, refused ? "refused" : "NOT refused", flash_attn_last_error());
    ok = ok && refused;
  };
  expect_invalid("num_heads 3 over num_heads_k 2");
  args.num_heads = 4;
  args.head_dim = 36;
  expect_invalid("head_dim 36");
  args.head_dim = 64;
  args.batch = 0;
  expect_invalid("batch 0");
  const flash_attn_status s = flash_attn_varlen_fwd(nullptr, nullptr);
  std::printf("api: NULL args: %s\n", s == FLASH_ATTN_INVALID_ARGUMENT ? "refused" : "NOT refused");
  return ok && s == FLASH_ATTN_INVALID_ARGUMENT;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace flash_attn_test;
  const bool allow_no_device = argc > 1 && std::strcmp(argv[1], "--allow-no-device") == 0;
  const int skip = allow_no_device ? 0 : kSkip;
  const int capabilities = flash_attn_capabilities();
  std::printf("libflash_attn: %s; paged KV %s, split-KV %s, backward %s\n", flash_attn_build_info(),
              capabilities & FLASH_ATTN_CAP_PAGED_KV ? "yes" : "no",
              capabilities & FLASH_ATTN_CAP_SPLIT_KV ? "yes" : "no",
              capabilities & FLASH_ATTN_CAP_BACKWARD ? "yes" : "no");
  if (!check_argument_errors() || !check_variant_arguments()) {
    std::printf("FAIL: the C API's argument checks\n");
    return 1;
  }
  int devices = 0;
  const cudaError_t found = cudaGetDeviceCount(&devices);
  if (found != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", found != cudaSuccess ? cudaGetErrorString(found) : "none");
    return skip;
  }
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  const int cc = major * 10 + minor;
  // Each case with its variant: 0 the forward pass over packed keys, then paged, split, paged
  // and split, backward, and decoding with the library's choice of splits.
  enum Variant { kPlain, kPaged, kSplit, kPagedSplit, kBackward, kAutoSplit };
  struct Run {
    Case c;
    Variant variant;
  };
  std::vector<Run> runs;
  const bool paged = capabilities & FLASH_ATTN_CAP_PAGED_KV, split = capabilities & FLASH_ATTN_CAP_SPLIT_KV;
  const bool backward = capabilities & FLASH_ATTN_CAP_BACKWARD;
  for (flash_attn_dtype dtype : {FLASH_ATTN_FP16, FLASH_ATTN_BF16}) {
    // The kernels' own head dims, and 80, which a build rounds up to its next kernel.
    for (int d : {32, 64, 80, 96, 128, 192, 256}) {
      if (!flash_attn_supports(dtype, d, cc)) continue;
      for (bool causal : {false, true}) {
        for (const Case c : {Case{dtype, d, causal, 4, 4}, Case{dtype, d, causal, 6, 2}}) {  // 6/2: GQA
          runs.push_back({c, kPlain});
          if (paged) runs.push_back({c, kPaged});
          if (split) runs.push_back({c, kSplit});
          if (paged && split) runs.push_back({c, kPagedSplit});
          if (backward) runs.push_back({c, kBackward});
          runs.push_back({c, kAutoSplit});
        }
      }
    }
  }
  if (runs.empty()) {
    std::printf("SKIP: this build has no fp16/bf16 kernel for compute capability %d\n", cc);
    return skip;
  }
  std::mt19937 rng(20251125);
  int failed = 0;
  // Pages of 256 rows (FlashAttention 2's smallest); three splits.
  for (const Run& r : runs) {
    bool ok = false;
    switch (r.variant) {
      case kPlain:
        ok = run_forward_case(r.c, kBatch, 1, 0, rng);
        break;
      case kPaged:
        ok = run_forward_case(r.c, kBatch, 1, 256, rng);
        break;
      case kSplit:
        ok = run_forward_case(r.c, kBatch, 3, 0, rng);
        break;
      case kPagedSplit:
        ok = run_forward_case(r.c, kBatch, 3, 256, rng);
        break;
      case kBackward:
        ok = run_backward_case(r.c, rng);
        break;
      case kAutoSplit:  // a build with split-KV splits these few long sequences
        ok = run_forward_case(r.c, kDecode, 0, 0, rng, split ? 2 : 1);
        break;
    }
    failed += ok ? 0 : 1;
  }
  if (failed > 0) {
    std::printf("FAIL: %d of %zu cases\n", failed, runs.size());
    return 1;
  }
  std::printf("PASS: %zu cases on compute capability %d\n", runs.size(), cc);
  return 0;
}
