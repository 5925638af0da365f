#pragma once

// The duplicate check of a matrix's cell ids (expand.h): two cells that would file the same
// wheel. A std::set or unordered_set of 100 000 ids costs a node and a copy of the id each,
// allocated and freed again; this keeps each id's hash and where it was seen in one flat table,
// and compares ids only when their hashes match.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace fabuild {

// An id equal to one before it: the indexes of both in the ids asked about, `earlier` the first
// of all that are equal.
struct RepeatedId {
  std::size_t index = 0;
  std::size_t earlier = 0;
};

// Every id of `ids` that repeats an earlier one, in order; empty when all differ (as nearly all
// do). The table of 100 000 ids is larger than the cache and read at random: the slot of the id
// a few places ahead is fetched while one is added, which hides most of each read's wait.
std::vector<RepeatedId> repeated_ids(std::span<const std::string> ids);

}  // namespace fabuild
