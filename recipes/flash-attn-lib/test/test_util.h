// What the test program's files share (varlen_test.cpp, test_variants.cpp): 16-bit values on the
// host, device memory, the batch of uneven sequences, random inputs, and the reference in double.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "flash_attn/flash_attn.h"

namespace flash_attn_test {

// IEEE half and bfloat16 from float, rounding to nearest even, and back: the values the GPU
// sees are the values the reference uses.
inline uint16_t to_half(float f) {
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

inline float from_half(uint16_t h) {
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

inline uint16_t to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

inline float from_bf16(uint16_t b) {
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

inline const char* dtype_name(flash_attn_dtype dtype) { return dtype == FLASH_ATTN_BF16 ? "bf16" : "fp16"; }

// Query and key lengths per sequence of a batch.
struct Batch {
  std::vector<int> q, k;
  int max_q() const { return *std::max_element(q.begin(), q.end()); }
  int max_k() const { return *std::max_element(k.begin(), k.end()); }
};

// Uneven, one of a single query, and one of more queries than keys: causal, its first 28 rows see
// no key (their LSE is -INFINITY, their output zero).
inline const Batch kBatch = {{1, 37, 100, 130, 48}, {64, 37, 150, 257, 20}};
// Decoding: one query each over long caches, where a split of the keys pays (num_splits 0).
inline const Batch kDecode = {{1, 1, 1, 1}, {3000, 1200, 2048, 64}};

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
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() {
    for (void* p : blocks) cudaFree(p);
  }
  template <typename T>
  cudaError_t allocate(T** p, std::size_t bytes) {
    const cudaError_t e = cudaMalloc(reinterpret_cast<void**>(p), bytes);
    if (e == cudaSuccess) blocks.push_back(*p);
    return e;
  }
  // A device copy of `host`.
  template <typename T>
  cudaError_t upload(T** p, const std::vector<T>& host) {
    const cudaError_t e = allocate(p, sizeof(T) * std::max<std::size_t>(1, host.size()));
    return e != cudaSuccess ? e : cudaMemcpy(*p, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice);
  }
};

// A tensor of 16-bit values as the GPU sees them (bits) and as the reference reads them.
struct Tensor16 {
  std::vector<uint16_t> bits;
  std::vector<float> values;
};

inline uint16_t encode(bool bf16, float f) { return bf16 ? to_bf16(f) : to_half(f); }
inline float decode(bool bf16, uint16_t h) { return bf16 ? from_bf16(h) : from_half(h); }

inline Tensor16 random_tensor(std::size_t n, bool bf16, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  Tensor16 t;
  t.bits.resize(n);
  t.values.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    t.bits[i] = encode(bf16, uniform(rng));
    t.values[i] = decode(bf16, t.bits[i]);
  }
  return t;
}

// The batch's packed layout: sequence b's rows are cu[b] .. cu[b+1]-1.
inline std::vector<int> cumulative(const std::vector<int>& lengths) {
  std::vector<int> cu(lengths.size() + 1, 0);
  for (std::size_t i = 0; i < lengths.size(); ++i) cu[i + 1] = cu[i] + lengths[i];
  return cu;
}

// The reference attention in double over packed q [total_q, h, d] and k, v [total_k, h_k, d]:
// out [total_q, h, d], lse [h, total_q] (scaled scores), and with dout given, the gradients dq
// (as q), dk and dv (as k). Causal rows see keys up to their own position counted from the end
// (bottom-right alignment), as FlashAttention aligns them.
struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

inline Reference reference(const Case& c, const Batch& batch, const std::vector<float>& q, const std::vector<float>& k,
                           const std::vector<float>& v, const std::vector<float>* dout) {
  const std::vector<int> cu_q = cumulative(batch.q), cu_k = cumulative(batch.k);
  const int total_q = cu_q.back(), total_k = cu_k.back(), d = c.head_dim, group = c.num_heads / c.num_heads_k;
  const double scale = 1.0 / std::sqrt(double(d));
  Reference r;
  r.out.assign(std::size_t(total_q) * c.num_heads * d, 0.0);
  r.lse.assign(std::size_t(total_q) * c.num_heads, 0.0);
  if (dout != nullptr) {
    r.dq.assign(r.out.size(), 0.0);
    r.dk.assign(std::size_t(total_k) * c.num_heads_k * d, 0.0);
    r.dv.assign(r.dk.size(), 0.0);
  }
  std::vector<double> p, dp;
  for (std::size_t b = 0; b < batch.q.size(); ++b) {
    const int lq = batch.q[b], lk = batch.k[b];
    for (int h = 0; h < c.num_heads; ++h) {
      const int hk = h / group;
      const auto q_at = [&](int i) { return &q[(std::size_t(cu_q[b] + i) * c.num_heads + h) * d]; };
      const auto k_row = [&](int j) { return (std::size_t(cu_k[b] + j) * c.num_heads_k + hk) * d; };
      for (int i = 0; i < lq; ++i) {
        const int visible = c.causal ? std::clamp(i + lk - lq + 1, 0, lk) : lk;  // none: out 0, LSE -inf
        const float* qi = q_at(i);
        p.assign(visible, 0.0);
        double best = -INFINITY;
        for (int j = 0; j < visible; ++j) {
          double s = 0;
          for (int x = 0; x < d; ++x) s += double(qi[x]) * k[k_row(j) + x];
          p[j] = s * scale;
          best = std::max(best, p[j]);
        }
        double sum = 0;
        for (int j = 0; j < visible; ++j) sum += (p[j] = std::exp(p[j] - best));
        const std::size_t row = (std::size_t(cu_q[b] + i) * c.num_heads + h) * d;
        for (int j = 0; j < visible; ++j) {
          p[j] /= sum;
          for (int x = 0; x < d; ++x) r.out[row + x] += p[j] * v[k_row(j) + x];
        }
        r.lse[std::size_t(h) * total_q + cu_q[b] + i] = best + std::log(sum);
        if (dout == nullptr) continue;
        // dP = dO V^T, D = dO . O, dS = P (dP - D); dQ = scale dS K, dK += scale dS^T Q, dV += P^T dO.
        const float* doi = &(*dout)[row];
        double big_d = 0;
        for (int x = 0; x < d; ++x) big_d += double(doi[x]) * r.out[row + x];
        dp.assign(visible, 0.0);
        for (int j = 0; j < visible; ++j) {
          for (int x = 0; x < d; ++x) dp[j] += double(doi[x]) * v[k_row(j) + x];
          const double ds = p[j] * (dp[j] - big_d);
          for (int x = 0; x < d; ++x) {
            r.dq[row + x] += scale * ds * k[k_row(j) + x];
            r.dk[k_row(j) + x] += scale * ds * qi[x];
            r.dv[k_row(j) + x] += p[j] * doi[x];
          }
        }
      }
    }
  }
  return r;
}

// The largest difference between a device result and the reference.
inline double max_error(const std::vector<uint16_t>& got, bool bf16, const std::vector<double>& want) {
  double error = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double diff = std::abs(double(decode(bf16, got[i])) - want[i]);
    error = std::isfinite(diff) ? std::max(error, diff) : INFINITY;
  }
  return error;
}

// The difference of a device LSE from the reference's: 0 where both are the same infinity (a row
// without keys), infinite where only one is infinite.
inline double lse_difference(float got, double want) {
  if (std::isinf(got) || std::isinf(want)) return double(got) == want ? 0.0 : INFINITY;
  const double diff = std::abs(double(got) - want);
  return std::isfinite(diff) ? diff : INFINITY;
}

// Outputs are averages of values in [-1, 1]: the kernels round P to the input type before P.V,
// which bounds their error near the type's precision (fp16 2^-11, bf16 2^-8).
inline double out_tolerance(bool bf16) { return bf16 ? 2e-2 : 4e-3; }
inline constexpr double kLseTolerance = 2e-3;

// One case on the GPU against the reference (test_variants.cpp); false when it fails (it says
// why). The forward pass over packed keys (page_size 0) or a paged cache of that page size, in
// num_splits parts (1: one pass; 0: the library's choice, which must be at least min_splits);
// the backward pass after a forward one (num_splits 0).
bool run_forward_case(const Case& c, const Batch& batch, int num_splits, int page_size, std::mt19937& rng,
                      int min_splits = 1);
bool run_backward_case(const Case& c, std::mt19937& rng);
// The variants' argument checks, without a device: refused, or NOT_BUILT where the build lacks them.
bool check_variant_arguments();

}  // namespace flash_attn_test
