#pragma once

// The duplicate check of a matrix's cell ids (expand.h): two cells that would file the same
// wheel. A std::set or unordered_set of 100 000 ids costs a node and a copy of the id each,
// allocated and freed again; this keeps each id's hash and where it was seen in one flat table,
// and compares ids only when their hashes match.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabuild {

class IdIndex {
 public:
  using IdOf = std::function<std::string(std::size_t)>;

  // `id_of(index)` spells the id added for `index`: to compare, when a hash matches, and to
  // place the ids again should more than `capacity` come.
  IdIndex(std::size_t capacity, IdOf id_of);

  // Adds the id of the cell at `index`; if an equal id was added before, returns that one's
  // index instead and adds nothing.
  std::optional<std::size_t> add(std::string_view id, std::size_t index);

 private:
  // 8 bytes, so that the table of 100 000 ids stays small enough for the cache: the low bits
  // of the hash pick the slot, the high ones tell most other ids apart.
  struct Slot {
    std::uint32_t high = 0;
    std::uint32_t index = kEmpty;
  };
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  void place(std::uint64_t hash, std::uint32_t index);
  void grow();

  IdOf id_of_;
  std::vector<Slot> slots_;  // open addressing, linear probing; a power of two, at most half full
  std::size_t used_ = 0;
};

}  // namespace fabuild
