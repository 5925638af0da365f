// The cases of the test program (varlen_test.cpp runs them): the forward pass over packed keys
// or a paged KV cache, in one pass or split-KV, and the backward pass, each against the
// reference in double (test_util.h).

#include <numeric>
#include <string>
#include <tuple>

#include "test_util.h"

namespace flash_attn_test {

namespace {

// The label of a case: "bf16 hdim128 causal h6/hk2 paged256 split3", "... split auto (16)" (the
// library's choice).
std::string label(const Case& c, const char* pass, int num_splits, int page_size, int chosen = 1) {
  std::string s = std::string(dtype_name(c.dtype)) + " hdim" + std::to_string(c.head_dim) +
                  (c.causal ? " causal" : " full") + " h" + std::to_string(c.num_heads) + "/hk" +
                  std::to_string(c.num_heads_k) + " " + pass;
  if (page_size > 0) s += " paged" + std::to_string(page_size);
  if (num_splits > 1) s += " split" + std::to_string(num_splits);
  if (num_splits == 0) s += " split auto (" + std::to_string(chosen) + ")";
  return s;
}

// A block table as a cache's allocator leaves it: each sequence's blocks in a shuffled order over
// twice as many blocks as are used. Returns [batch, max_blocks]; num_blocks is the cache's size.
std::vector<int> block_table(const Batch& b, int max_blocks, int& num_blocks, std::mt19937& rng) {
  const int batch = int(b.k.size());
  num_blocks = 2 * batch * max_blocks;
  std::vector<int> order(num_blocks);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(std::size_t(batch) * max_blocks);
  return order;
}

// A paged copy of packed keys or values [total_k, h_k, d]: [num_blocks, page_size, h_k, d],
// sequence b's key j in block table[b][j / page_size], row j % page_size; unused rows zero.
std::vector<uint16_t> page(const Batch& batch, const std::vector<uint16_t>& packed, int row_elements, int page_size,
                           int max_blocks, const std::vector<int>& table, int num_blocks) {
  const std::vector<int> cu_k = cumulative(batch.k);
  std::vector<uint16_t> cache(std::size_t(num_blocks) * page_size * row_elements, 0);
  for (std::size_t b = 0; b < batch.k.size(); ++b) {
    for (int j = 0; j < batch.k[b]; ++j) {
      const int physical = table[b * max_blocks + j / page_size];
      std::copy_n(&packed[std::size_t(cu_k[b] + j) * row_elements], row_elements,
                  &cache[(std::size_t(physical) * page_size + j % page_size) * row_elements]);
    }
  }
  return cache;
}

}  // namespace

bool run_forward_case(const Case& c, const Batch& sequences, int num_splits, int page_size, std::mt19937& rng,
                      int min_splits) {
  const bool bf16 = c.dtype == FLASH_ATTN_BF16;
  const std::vector<int> cu_q = cumulative(sequences.q), cu_k = cumulative(sequences.k);
  const int batch = int(sequences.q.size()), total_q = cu_q.back(), total_k = cu_k.back(), d = c.head_dim;
  const int max_q = sequences.max_q(), max_k = sequences.max_k();
  const Tensor16 q = random_tensor(std::size_t(total_q) * c.num_heads * d, bf16, rng);
  const Tensor16 k = random_tensor(std::size_t(total_k) * c.num_heads_k * d, bf16, rng);
  const Tensor16 v = random_tensor(std::size_t(total_k) * c.num_heads_k * d, bf16, rng);

  DeviceMemory memory;
  flash_attn_varlen_fwd_args args{};
  void *dq = nullptr, *dk = nullptr, *dv = nullptr, *dout = nullptr;
  float* dlse = nullptr;
  int *dcu_q = nullptr, *dcu_k = nullptr, *dtable = nullptr, *dused = nullptr;
  CHECK_CUDA(memory.upload(reinterpret_cast<uint16_t**>(&dq), q.bits));
  CHECK_CUDA(memory.allocate(&dout, q.bits.size() * 2));
  CHECK_CUDA(memory.allocate(&dlse, sizeof(float) * c.num_heads * total_q));
  CHECK_CUDA(memory.upload(&dcu_q, cu_q));
  if (page_size > 0) {
    const int max_blocks = (max_k + page_size - 1) / page_size;
    int num_blocks = 0;
    const std::vector<int> table = block_table(sequences, max_blocks, num_blocks, rng);
    const int row = c.num_heads_k * d;
    CHECK_CUDA(memory.upload(reinterpret_cast<uint16_t**>(&dk),
                             page(sequences, k.bits, row, page_size, max_blocks, table, num_blocks)));
    CHECK_CUDA(memory.upload(reinterpret_cast<uint16_t**>(&dv),
                             page(sequences, v.bits, row, page_size, max_blocks, table, num_blocks)));
    CHECK_CUDA(memory.upload(&dtable, table));
    CHECK_CUDA(memory.upload(&dused, sequences.k));
    args.block_table = dtable;
    args.seqused_k = dused;
    args.max_blocks_per_seq = max_blocks;
    args.page_size = page_size;
    args.num_blocks = num_blocks;
  } else {
    CHECK_CUDA(memory.upload(reinterpret_cast<uint16_t**>(&dk), k.bits));
    CHECK_CUDA(memory.upload(reinterpret_cast<uint16_t**>(&dv), v.bits));
    CHECK_CUDA(memory.upload(&dcu_k, cu_k));
    args.cu_seqlens_k = dcu_k;
    args.total_k = total_k;
  }
  args.dtype = c.dtype;
  args.q = dq;
  args.k = dk;
  args.v = dv;
  args.out = dout;
  args.softmax_lse = dlse;
  args.cu_seqlens_q = dcu_q;
  args.batch = batch;
  args.total_q = total_q;
  args.max_seqlen_q = max_q;
  args.max_seqlen_k = max_k;
  args.num_heads = c.num_heads;
  args.num_heads_k = c.num_heads_k;
  args.head_dim = d;
  args.causal = c.causal ? 1 : 0;
  args.num_splits = num_splits;
  // What the library splits the keys into: num_splits itself above 0, its choice at 0.
  const int chosen = flash_attn_varlen_fwd_num_splits(&args);
  const std::string name = label(c, "fwd", num_splits, page_size, chosen);
  const flash_attn_status status = flash_attn_varlen_fwd(&args, nullptr);
  if (status == FLASH_ATTN_NOT_BUILT && c.causal) {  // a profile without the causal kernels
    std::printf("%s: not in this build (%s)\n", name.c_str(), flash_attn_last_error());
    return true;
  }
  if (status != FLASH_ATTN_OK) {
    std::printf("%s: FAIL: status %d: %s\n", name.c_str(), int(status), flash_attn_last_error());
    return false;
  }
  if (num_splits > 0 ? chosen != std::max(1, num_splits) : chosen < min_splits) {
    std::printf("%s: FAIL: flash_attn_varlen_fwd_num_splits says %d, want %s %d\n", name.c_str(), chosen,
                num_splits > 0 ? "" : "at least", num_splits > 0 ? std::max(1, num_splits) : min_splits);
    return false;
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<uint16_t> out(q.bits.size());
  std::vector<float> lse(std::size_t(c.num_heads) * total_q);
  CHECK_CUDA(cudaMemcpy(out.data(), dout, out.size() * 2, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(lse.data(), dlse, sizeof(float) * lse.size(), cudaMemcpyDeviceToHost));
  const Reference want = reference(c, sequences, q.values, k.values, v.values, nullptr);
  const double out_error = max_error(out, bf16, want.out);
  double lse_error = 0;
  for (std::size_t i = 0; i < lse.size(); ++i) lse_error = std::max(lse_error, lse_difference(lse[i], want.lse[i]));
  const bool ok = out_error <= out_tolerance(bf16) && lse_error <= kLseTolerance;
  std::printf("%s: max|out-ref| %.2e (tol %.0e), max|lse-ref| %.2e (tol %.0e): %s\n", name.c_str(), out_error,
              out_tolerance(bf16), lse_error, kLseTolerance, ok ? "PASS" : "FAIL");
  return ok;
}

bool run_backward_case(const Case& c, std::mt19937& rng) {
  const bool bf16 = c.dtype == FLASH_ATTN_BF16;
  const std::vector<int> cu_q = cumulative(kBatch.q), cu_k = cumulative(kBatch.k);
  const int batch = int(kBatch.q.size()), total_q = cu_q.back(), total_k = cu_k.back(), d = c.head_dim;
  const Tensor16 q = random_tensor(std::size_t(total_q) * c.num_heads * d, bf16, rng);
  const Tensor16 k = random_tensor(std::size_t(total_k) * c.num_heads_k * d, bf16, rng);
  const Tensor16 v = random_tensor(std::size_t(total_k) * c.num_heads_k * d, bf16, rng);
  const Tensor16 grad = random_tensor(q.bits.size(), bf16, rng);
  const std::size_t q_bytes = q.bits.size() * 2, k_bytes = k.bits.size() * 2;

  DeviceMemory memory;
  uint16_t *dq_in = nullptr, *dk_in = nullptr, *dv_in = nullptr, *dgrad = nullptr;
  void *dout = nullptr, *ddq = nullptr, *ddk = nullptr, *ddv = nullptr;
  float* dlse = nullptr;
  int *dcu_q = nullptr, *dcu_k = nullptr;
  CHECK_CUDA(memory.upload(&dq_in, q.bits));
  CHECK_CUDA(memory.upload(&dk_in, k.bits));
  CHECK_CUDA(memory.upload(&dv_in, v.bits));
  CHECK_CUDA(memory.upload(&dgrad, grad.bits));
  CHECK_CUDA(memory.upload(&dcu_q, cu_q));
  CHECK_CUDA(memory.upload(&dcu_k, cu_k));
  CHECK_CUDA(memory.allocate(&dout, q_bytes));
  CHECK_CUDA(memory.allocate(&dlse, sizeof(float) * c.num_heads * total_q));
  CHECK_CUDA(memory.allocate(&ddq, q_bytes));
  CHECK_CUDA(memory.allocate(&ddk, k_bytes));
  CHECK_CUDA(memory.allocate(&ddv, k_bytes));

  // The forward pass gives out and softmax_lse, as training runs it.
  flash_attn_varlen_fwd_args f{};
  f.dtype = c.dtype;
  f.q = dq_in;
  f.k = dk_in;
  f.v = dv_in;
  f.out = dout;
  f.softmax_lse = dlse;
  f.cu_seqlens_q = dcu_q;
  f.cu_seqlens_k = dcu_k;
  f.batch = batch;
  f.total_q = total_q;
  f.total_k = total_k;
  f.max_seqlen_q = kBatch.max_q();
  f.max_seqlen_k = kBatch.max_k();
  f.num_heads = c.num_heads;
  f.num_heads_k = c.num_heads_k;
  f.head_dim = d;
  f.causal = c.causal ? 1 : 0;
  const std::string name = label(c, "bwd", 1, 0);
  flash_attn_status status = flash_attn_varlen_fwd(&f, nullptr);
  if (status == FLASH_ATTN_NOT_BUILT && c.causal) {
    std::printf("%s: not in this build (%s)\n", name.c_str(), flash_attn_last_error());
    return true;
  }
  flash_attn_varlen_bwd_args a{};
  if (status == FLASH_ATTN_OK) {
    a.dtype = c.dtype;
    a.q = dq_in;
    a.k = dk_in;
    a.v = dv_in;
    a.out = dout;
    a.dout = dgrad;
    a.softmax_lse = dlse;
    a.dq = ddq;
    a.dk = ddk;
    a.dv = ddv;
    a.cu_seqlens_q = dcu_q;
    a.cu_seqlens_k = dcu_k;
    a.batch = batch;
    a.total_q = total_q;
    a.total_k = total_k;
    a.max_seqlen_q = f.max_seqlen_q;
    a.max_seqlen_k = f.max_seqlen_k;
    a.num_heads = c.num_heads;
    a.num_heads_k = c.num_heads_k;
    a.head_dim = d;
    a.causal = f.causal;
    status = flash_attn_varlen_bwd(&a, nullptr);
  }
  if (status != FLASH_ATTN_OK) {
    std::printf("%s: FAIL: status %d: %s\n", name.c_str(), int(status), flash_attn_last_error());
    return false;
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<uint16_t> got_dq(q.bits.size()), got_dk(k.bits.size()), got_dv(k.bits.size());
  CHECK_CUDA(cudaMemcpy(got_dq.data(), ddq, q_bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(got_dk.data(), ddk, k_bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(got_dv.data(), ddv, k_bytes, cudaMemcpyDeviceToHost));
  const Reference want = reference(c, kBatch, q.values, k.values, v.values, &grad.values);
  // Relative to each gradient's largest value: the kernels round P and dS to the input type
  // before their products, so the error scales with the gradient, near the type's precision.
  const double tolerance = bf16 ? 3e-2 : 5e-3;
  bool ok = true;
  std::string errors;
  for (auto [what, got, ref] : {std::tuple{"dq", &got_dq, &want.dq}, std::tuple{"dk", &got_dk, &want.dk},
                                std::tuple{"dv", &got_dv, &want.dv}}) {
    double largest = 0;
    for (double x : *ref) largest = std::max(largest, std::abs(x));
    const double relative = max_error(*got, bf16, *ref) / std::max(largest, 1e-6);
    ok = ok && relative <= tolerance;
    char part[64];
    std::snprintf(part, sizeof(part), "%s %.2e, ", what, relative);
    errors += part;
  }
  std::printf("%s: max|grad-ref|/max|ref| %s(tol %.0e): %s\n", name.c_str(), errors.c_str(), tolerance,
              ok ? "PASS" : "FAIL");
  return ok;
}

bool check_variant_arguments() {
  const int capabilities = flash_attn_capabilities();
  int dummy = 0;
  flash_attn_varlen_fwd_args f{};
  f.q = f.k = f.v = &dummy;
  f.out = &dummy;
  f.softmax_lse = reinterpret_cast<float*>(&dummy);
  f.cu_seqlens_q = f.cu_seqlens_k = &dummy;
  f.batch = 1;
  f.total_q = f.total_k = f.max_seqlen_q = f.max_seqlen_k = 4;
  f.num_heads = f.num_heads_k = 4;
  f.head_dim = 64;
  bool ok = true;
  // want: FLASH_ATTN_INVALID_ARGUMENT, or NOT_BUILT where the build lacks `capability`.
  const auto expect = [&](const char* what, flash_attn_status got, flash_attn_status want) {
    const bool right = got == want && std::strlen(flash_attn_last_error()) > 0;
    std::printf("api: %s: %s (status %d, want %d: %s)\n", what, right ? "refused" : "NOT refused as it should be",
                int(got), int(want), flash_attn_last_error());
    ok = ok && right;
  };
  f.num_splits = -1;
  expect("num_splits -1", flash_attn_varlen_fwd(&f, nullptr), FLASH_ATTN_INVALID_ARGUMENT);
  const int splits = flash_attn_varlen_fwd_num_splits(&f);
  const bool counted = splits == -1 && std::strstr(flash_attn_last_error(), "num_splits") != nullptr;
  std::printf("api: the splits of num_splits -1: %d (%s): %s\n", splits, flash_attn_last_error(),
              counted ? "refused" : "NOT refused as it should be");
  ok = ok && counted;
  f.num_splits = 0;
  f.block_table = &dummy;
  f.page_size = 256;
  f.max_blocks_per_seq = f.num_blocks = 1;
  expect("block_table without seqused_k", flash_attn_varlen_fwd(&f, nullptr), FLASH_ATTN_INVALID_ARGUMENT);
  f.seqused_k = &dummy;
  f.max_seqlen_k = 300;
  expect("max_seqlen_k 300 over one page of 256", flash_attn_varlen_fwd(&f, nullptr), FLASH_ATTN_INVALID_ARGUMENT);
  f.max_seqlen_k = 4;
  if ((capabilities & FLASH_ATTN_CAP_PAGED_KV) == 0) {
    expect("a paged cache in a build without it", flash_attn_varlen_fwd(&f, nullptr), FLASH_ATTN_NOT_BUILT);
  }
  f.block_table = nullptr;
  f.seqused_k = nullptr;
  if ((capabilities & FLASH_ATTN_CAP_SPLIT_KV) == 0) {
    f.num_splits = 2;
    expect("num_splits 2 in a build without split-KV", flash_attn_varlen_fwd(&f, nullptr), FLASH_ATTN_NOT_BUILT);
  }
  flash_attn_varlen_bwd_args b{};
  b.q = b.k = b.v = b.out = b.dout = &dummy;
  b.softmax_lse = reinterpret_cast<float*>(&dummy);
  b.dq = b.dk = b.dv = &dummy;
  b.cu_seqlens_q = b.cu_seqlens_k = &dummy;
  b.batch = 1;
  b.total_q = b.total_k = b.max_seqlen_q = b.max_seqlen_k = 4;
  b.num_heads = b.num_heads_k = 4;
  b.head_dim = 64;
  b.dtype = FLASH_ATTN_E4M3;
  expect("backward in e4m3", flash_attn_varlen_bwd(&b, nullptr), FLASH_ATTN_INVALID_ARGUMENT);
  b.dtype = FLASH_ATTN_BF16;
  b.dout = nullptr;
  expect("backward without dout", flash_attn_varlen_bwd(&b, nullptr), FLASH_ATTN_INVALID_ARGUMENT);
  b.dout = &dummy;
  if ((capabilities & FLASH_ATTN_CAP_BACKWARD) == 0) {
    expect("backward in a build without it", flash_attn_varlen_bwd(&b, nullptr), FLASH_ATTN_NOT_BUILT);
  }
  const bool version = flash_attn_api_version() == FLASH_ATTN_API_VERSION;
  std::printf("api: version %d (header %d): %s\n", flash_attn_api_version(), FLASH_ATTN_API_VERSION,
              version ? "same" : "DIFFERENT");
  return ok && version;
}

}  // namespace flash_attn_test
