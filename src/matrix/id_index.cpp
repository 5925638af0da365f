#include "matrix/id_index.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string_view>

namespace fabuild {

namespace {

// 8 bytes, so that the table stays as small as it can: the low bits of the hash pick the slot,
// the high ones tell most other ids apart.
struct Slot {
  std::uint32_t high = 0;
  std::uint32_t index = 0;  // 1 + the id's index; 0: empty
};

std::uint64_t hash_of(std::string_view id) { return std::hash<std::string_view>{}(id); }

void prefetch([[maybe_unused]] const void* address) {
#if defined(__GNUC__)
  __builtin_prefetch(address);
#endif
}

}  // namespace

std::vector<RepeatedId> repeated_ids(std::span<const std::string> ids) {
  if (ids.size() >= std::numeric_limits<std::uint32_t>::max()) throw std::length_error("too many ids to compare");
  std::vector<RepeatedId> repeated;
  // Open addressing with linear probing, at most half full.
  std::vector<Slot> slots(std::bit_ceil(2 * ids.size() + 2));
  const std::size_t mask = slots.size() - 1;
  // The hashes of the ids from here to kAhead on, by index modulo kAhead.
  constexpr std::size_t kAhead = 8;
  std::array<std::uint64_t, kAhead> ahead{};
  for (std::size_t i = 0; i < std::min(kAhead, ids.size()); ++i) {
    ahead[i] = hash_of(ids[i]);
    prefetch(&slots[ahead[i] & mask]);
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::uint64_t hash = ahead[i % kAhead];
    if (i + kAhead < ids.size()) {
      ahead[i % kAhead] = hash_of(ids[i + kAhead]);
      prefetch(&slots[ahead[i % kAhead] & mask]);
    }
    const auto high = static_cast<std::uint32_t>(hash >> 32);
    std::size_t s = hash & mask;
    for (; slots[s].index != 0; s = (s + 1) & mask) {
      if (slots[s].high == high && ids[slots[s].index - 1] == ids[i]) break;
    }
    if (slots[s].index != 0) {
      repeated.push_back({i, slots[s].index - 1});
      continue;
    }
    slots[s] = Slot{high, static_cast<std::uint32_t>(i + 1)};
  }
  return repeated;
}

}  // namespace fabuild
