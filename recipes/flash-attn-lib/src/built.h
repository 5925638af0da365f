// What the profile's switches left in this build, and the dispatch from a call's run-time values
// (head dim, dtype, causal) to the kernel template instantiated for them, shared by the
// flavours' backends. The switches are FLASHATTENTION_DISABLE_<NAME>, as the sources' setup.py
// spell them; a kernel the switches remove is never named, so its template is never needed.
#pragma once

#include <type_traits>

#include "flash_attn/flash_attn.h"

namespace flash_attn_lib {

// Whether the profile left head dim `d` on (a dim a flavour does not list is not built either).
constexpr bool head_dim_switched_on(int d) {
  switch (d) {
#ifdef FLASHATTENTION_DISABLE_HDIM32
    case 32:
      return false;
#endif
#ifdef FLASHATTENTION_DISABLE_HDIM64
    case 64:
      return false;
#endif
#ifdef FLASHATTENTION_DISABLE_HDIM96
    case 96:
      return false;
#endif
#ifdef FLASHATTENTION_DISABLE_HDIM128
    case 128:
      return false;
#endif
#ifdef FLASHATTENTION_DISABLE_HDIM192
    case 192:
      return false;
#endif
#ifdef FLASHATTENTION_DISABLE_HDIM256
    case 256:
      return false;
#endif
    default:
      return true;
  }
}

#ifdef FLASHATTENTION_DISABLE_FP16
inline constexpr bool kFp16Built = false;
#else
inline constexpr bool kFp16Built = true;
#endif
#ifdef FLASHATTENTION_DISABLE_FP8
inline constexpr bool kFp8Built = false;
#else
inline constexpr bool kFp8Built = true;
#endif
#ifdef FLASHATTENTION_DISABLE_CAUSAL
inline constexpr bool kCausalBuilt = false;
#else
inline constexpr bool kCausalBuilt = true;
#endif
// The variants beyond the plain forward pass, as the profile left them (a flavour that lacks one
// reports it absent in its capabilities() whatever the switches say).
#ifdef FLASHATTENTION_DISABLE_PAGEDKV
inline constexpr bool kPagedBuilt = false;
#else
inline constexpr bool kPagedBuilt = true;
#endif
#ifdef FLASHATTENTION_DISABLE_SPLIT
inline constexpr bool kSplitBuilt = false;
#else
inline constexpr bool kSplitBuilt = true;
#endif
#ifdef FLASHATTENTION_DISABLE_BACKWARD
inline constexpr bool kBackwardBuilt = false;
#else
inline constexpr bool kBackwardBuilt = true;
#endif

// A flavour's head dims (ascending) of which the build has those the profile left on.
template <int... Dims>
struct HeadDims {
  // The smallest built dim that holds `head_dim` (a kernel's loads are bounded by the call's
  // head dim); 0 when none does.
  static constexpr int round_up(int head_dim) {
    int found = 0;
    ((found = found == 0 && head_dim_switched_on(Dims) && head_dim <= Dims ? Dims : found), ...);
    return found;
  }

  // Calls f(std::integral_constant<int, D>{}) for the built dim D equal to `dim`; false when
  // `dim` is not one.
  template <typename F>
  static bool dispatch(int dim, F&& f) {
    return (call<Dims>(dim, f) || ...);
  }

 private:
  template <int D, typename F>
  static bool call(int dim, F& f) {
    if constexpr (head_dim_switched_on(D)) {
      if (dim == D) {
        f(std::integral_constant<int, D>{});
        return true;
      }
    }
    return false;
  }
};

// An element type passed as a value: f(Type<T>{}) and `typename decltype(t)::type`.
template <typename T>
struct Type {
  using type = T;
};

// Calls f(Type<Fp16>{}) or f(Type<Bf16>{}) for a 16-bit `dtype` the build has; the result of f,
// or false when it has none for `dtype`.
template <typename Fp16, typename Bf16, typename F>
bool dispatch_16bit(flash_attn_dtype dtype, F&& f) {
  if constexpr (kFp16Built) {
    if (dtype == FLASH_ATTN_FP16) return f(Type<Fp16>{});
  }
  return dtype == FLASH_ATTN_BF16 && f(Type<Bf16>{});
}

// Calls f(std::bool_constant<causal>{}) when the build has kernels for `causal`; the result of
// f, or false.
template <typename F>
bool dispatch_causal(bool causal, F&& f) {
  if constexpr (kCausalBuilt) {
    if (causal) return f(std::true_type{});
  }
  return !causal && f(std::false_type{});
}

}  // namespace flash_attn_lib
