#include "matrix/id_index.h"

#include <bit>
#include <stdexcept>

namespace fabuild {

namespace {

std::uint64_t hash_of(std::string_view id) { return std::hash<std::string_view>{}(id); }

}  // namespace

IdIndex::IdIndex(std::size_t capacity, IdOf id_of)
    : id_of_(std::move(id_of)), slots_(std::bit_ceil(2 * capacity + 2)) {}

std::optional<std::size_t> IdIndex::add(std::string_view id, std::size_t index) {
  if (index >= kEmpty) throw std::length_error("more cells than an IdIndex numbers");
  if (2 * (used_ + 1) > slots_.size()) grow();
  const std::uint64_t hash = hash_of(id);
  const auto high = static_cast<std::uint32_t>(hash >> 32);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.index == kEmpty) break;
    if (slot.high == high && id_of_(slot.index) == id) return slot.index;
  }
  place(hash, static_cast<std::uint32_t>(index));
  ++used_;
  return std::nullopt;
}

void IdIndex::place(std::uint64_t hash, std::uint32_t index) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  while (slots_[i].index != kEmpty) i = (i + 1) & mask;
  slots_[i] = Slot{static_cast<std::uint32_t>(hash >> 32), index};
}

// The slots keep only part of each hash: the ids are spelled again to place them.
void IdIndex::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  for (const Slot& slot : old) {
    if (slot.index != kEmpty) place(hash_of(id_of_(slot.index)), slot.index);
  }
}

}  // namespace fabuild
