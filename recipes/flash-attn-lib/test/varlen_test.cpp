// The varlen forward pass of libflash_attn against a CPU reference: fp16 and bf16, the head
// dims the build has (and one it rounds up to a kernel), causal and not, multi-head and grouped
// (GQA) keys, sequences of uneven lengths in one batch. Each case prints its largest errors.
//
//   flash_attn_varlen_test [--allow-no-device]
//
// Exit 0: every case passed; 1: a case failed; 77: no CUDA device here, or none this build has
// kernels for (0 with --allow-no-device). The C API's argument checks run first, also without
// a device. Built against the installed package: share/flash_attn/test/CMakeLists.txt.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "flash_attn/flash_attn.h"

namespace {

constexpr int kSkip = 77;

// IEEE half and bfloat16 from float, rounding to nearest even, and back: the values the GPU
// sees are the values the reference uses.
uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int exponent = int((x >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = x & 0x7fffffu;
  if (exponent <= 0) {  // subnormal or zero in half
    if (exponent < -10) return uint16_t(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - exponent;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  if (exponent >= 31) return uint16_t(sign | 0x7c00u);
  uint32_t half = sign | (uint32_t(exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return uint16_t(half);
}

float from_half(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const int exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ffu;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(float(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(float(mantissa | 0x400u), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

uint16_t to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

float from_bf16(uint16_t b) {
  const uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

struct Case {
  flash_attn_dtype dtype;
  int head_dim;
  bool causal;
  int num_heads;
  int num_heads_k;
};

// Query and key lengths per sequence: uneven, one of a single query, keys never fewer than
// queries (so that no causal row is left without a key to see).
const std::vector<int> kSeqQ = {1, 37, 100, 130};
const std::vector<int> kSeqK = {64, 37, 150, 257};

#define CHECK_CUDA(call)                                                                        \
  do {                                                                                          \
    const cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                                    \
      std::printf("FAIL: %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
      return false;                                                                             \
    }                                                                                           \
  } while (0)

// Device memory, freed when the case ends however it ends.
struct DeviceMemory {
  std::vector<void*> blocks;
  ~DeviceMemory() {
    for (void* p : blocks) cudaFree(p);
  }
  template <typename T>
  cudaError_t allocate(T** p, std::size_t bytes) {
    const cudaError_t e = cudaMalloc(reinterpret_cast<void**>(p), bytes);
    if (e == cudaSuccess) blocks.push_back(*p);
    return e;
  }
};

// Runs one case on the GPU and the CPU; false when it fails (it says why).
bool run_case(const Case& c, std::mt19937& rng) {
  const int batch = int(kSeqQ.size());
  std::vector<int> cu_q(batch + 1, 0), cu_k(batch + 1, 0);
  for (int i = 0; i < batch; ++i) {
    cu_q[i + 1] = cu_q[i] + kSeqQ[i];
    cu_k[i + 1] = cu_k[i] + kSeqK[i];
  }
  const int total_q = cu_q[batch], total_k = cu_k[batch], d = c.head_dim;
  const bool bf16 = c.dtype == FLASH_ATTN_BF16;
  const auto encode = [&](float f) { return bf16 ? to_bf16(f) : to_half(f); };
  const auto decode = [&](uint16_t h) { return bf16 ? from_bf16(h) : from_half(h); };
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  const auto fill = [&](std::size_t n, std::vector<uint16_t>& bits, std::vector<float>& values) {
    bits.resize(n);
    values.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      bits[i] = encode(uniform(rng));
      values[i] = decode(bits[i]);
    }
  };
  std::vector<uint16_t> q_bits, k_bits, v_bits;
  std::vector<float> q, k, v;
  fill(std::size_t(total_q) * c.num_heads * d, q_bits, q);
  fill(std::size_t(total_k) * c.num_heads_k * d, k_bits, k);
  fill(std::size_t(total_k) * c.num_heads_k * d, v_bits, v);

  void *dq = nullptr, *dk = nullptr, *dv = nullptr, *dout = nullptr;
  float* dlse = nullptr;
  int *dcu_q = nullptr, *dcu_k = nullptr;
  const std::size_t q_bytes = q_bits.size() * 2, kv_bytes = k_bits.size() * 2;
  DeviceMemory memory;
  CHECK_CUDA(memory.allocate(&dq, q_bytes));
  CHECK_CUDA(memory.allocate(&dk, kv_bytes));
  CHECK_CUDA(memory.allocate(&dv, kv_bytes));
  CHECK_CUDA(memory.allocate(&dout, q_bytes));
  CHECK_CUDA(memory.allocate(&dlse, sizeof(float) * c.num_heads * total_q));
  CHECK_CUDA(memory.allocate(&dcu_q, sizeof(int) * (batch + 1)));
  CHECK_CUDA(memory.allocate(&dcu_k, sizeof(int) * (batch + 1)));
  CHECK_CUDA(cudaMemcpy(dq, q_bits.data(), q_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dk, k_bits.data(), kv_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dv, v_bits.data(), kv_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dcu_q, cu_q.data(), sizeof(int) * (batch + 1), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dcu_k, cu_k.data(), sizeof(int) * (batch + 1), cudaMemcpyHostToDevice));

  flash_attn_varlen_fwd_args args{};
  args.dtype = c.dtype;
  args.q = dq;
  args.k = dk;
  args.v = dv;
  args.out = dout;
  args.softmax_lse = dlse;
  args.cu_seqlens_q = dcu_q;
  args.cu_seqlens_k = dcu_k;
  args.batch = batch;
  args.total_q = total_q;
  args.total_k = total_k;
  args.max_seqlen_q = *std::max_element(kSeqQ.begin(), kSeqQ.end());
  args.max_seqlen_k = *std::max_element(kSeqK.begin(), kSeqK.end());
  args.num_heads = c.num_heads;
  args.num_heads_k = c.num_heads_k;
  args.head_dim = d;
  args.softmax_scale = 0;  // 1/sqrt(head_dim)
  args.causal = c.causal ? 1 : 0;
  const flash_attn_status status = flash_attn_varlen_fwd(&args, nullptr);
  const char* label = bf16 ? "bf16" : "fp16";
  if (status == FLASH_ATTN_NOT_BUILT && c.causal) {  // a profile without the causal kernels
    std::printf("%s hdim%d causal h%d/hk%d: not in this build (%s)\n", label, d, c.num_heads, c.num_heads_k,
                flash_attn_last_error());
    return true;
  }
  if (status != FLASH_ATTN_OK) {
    std::printf("%s hdim%d %s h%d/hk%d: FAIL: status %d: %s\n", label, d, c.causal ? "causal" : "full", c.num_heads,
                c.num_heads_k, int(status), flash_attn_last_error());
    return false;
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<uint16_t> out_bits(q_bits.size());
  std::vector<float> lse(std::size_t(c.num_heads) * total_q);
  CHECK_CUDA(cudaMemcpy(out_bits.data(), dout, q_bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(lse.data(), dlse, sizeof(float) * lse.size(), cudaMemcpyDeviceToHost));

  // The reference, in double: softmax(scale * q.k) v over the keys each row sees; causal rows
  // see keys up to their own position counted from the end (bottom-right alignment).
  const double scale = 1.0 / std::sqrt(double(d));
  double out_error = 0, lse_error = 0;
  std::vector<double> scores, acc(d);
  for (int b = 0; b < batch; ++b) {
    const int lq = kSeqQ[b], lk = kSeqK[b];
    for (int h = 0; h < c.num_heads; ++h) {
      const int hk = h / (c.num_heads / c.num_heads_k);
      for (int i = 0; i < lq; ++i) {
        const int visible = c.causal ? std::min(lk, i + lk - lq + 1) : lk;
        const float* qi = &q[(std::size_t(cu_q[b] + i) * c.num_heads + h) * d];
        scores.assign(visible, 0.0);
        double best = -INFINITY;
        for (int j = 0; j < visible; ++j) {
          const float* kj = &k[(std::size_t(cu_k[b] + j) * c.num_heads_k + hk) * d];
          double s = 0;
          for (int x = 0; x < d; ++x) s += double(qi[x]) * kj[x];
          scores[j] = s * scale;
          best = std::max(best, scores[j]);
        }
        double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int j = 0; j < visible; ++j) {
          const double p = std::exp(scores[j] - best);
          sum += p;
          const float* vj = &v[(std::size_t(cu_k[b] + j) * c.num_heads_k + hk) * d];
          for (int x = 0; x < d; ++x) acc[x] += p * vj[x];
        }
        const std::size_t row = (std::size_t(cu_q[b] + i) * c.num_heads + h) * d;
        for (int x = 0; x < d; ++x) {
          out_error = std::max(out_error, std::abs(double(decode(out_bits[row + x])) - acc[x] / sum));
        }
        const double want_lse = best + std::log(sum);
        lse_error = std::max(lse_error, std::abs(double(lse[std::size_t(h) * total_q + cu_q[b] + i]) - want_lse));
      }
    }
  }
  // Outputs are averages of values in [-1, 1]: the kernels round P to the input type before
  // P.V, which bounds their error near the type's precision (fp16 2^-11, bf16 2^-8).
  const double out_tolerance = bf16 ? 2e-2 : 4e-3, lse_tolerance = 2e-3;
  const bool ok = out_error <= out_tolerance && lse_error <= lse_tolerance && std::isfinite(out_error);
  std::printf("%s hdim%d %s h%d/hk%d: max|out-ref| %.2e (tol %.0e), max|lse-ref| %.2e (tol %.0e): %s\n", label, d,
              c.causal ? "causal" : "full", c.num_heads, c.num_heads_k, out_error, out_tolerance, lse_error,
              lse_tolerance, ok ? "PASS" : "FAIL");
  return ok;
}

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
  const bool allow_no_device = argc > 1 && std::strcmp(argv[1], "--allow-no-device") == 0;
  const int skip = allow_no_device ? 0 : kSkip;
  std::printf("libflash_attn: %s\n", flash_attn_build_info());
  if (!check_argument_errors()) {
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
  std::vector<Case> cases;
  for (flash_attn_dtype dtype : {FLASH_ATTN_FP16, FLASH_ATTN_BF16}) {
    // The kernels' own head dims, and 80, which a build rounds up to its next kernel.
    for (int d : {32, 64, 80, 96, 128, 192, 256}) {
      if (!flash_attn_supports(dtype, d, cc)) continue;
      for (bool causal : {false, true}) {
        cases.push_back({dtype, d, causal, 4, 4});
        cases.push_back({dtype, d, causal, 6, 2});  // GQA: three query heads per key head
      }
    }
  }
  if (cases.empty()) {
    std::printf("SKIP: this build has no fp16/bf16 kernel for compute capability %d\n", cc);
    return skip;
  }
  std::mt19937 rng(20251125);
  int failed = 0;
  for (const Case& c : cases) failed += run_case(c, rng) ? 0 : 1;
  if (failed > 0) {
    std::printf("FAIL: %d of %zu cases\n", failed, cases.size());
    return 1;
  }
  std::printf("PASS: %zu cases on compute capability %d\n", cases.size(), cc);
  return 0;
}
