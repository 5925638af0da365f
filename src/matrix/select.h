#pragma once

// Picking cells from an expanded matrix: filter flags, --only, and --shard.

#include <optional>
#include <string>
#include <vector>

#include "matrix/expand.h"

namespace fabuild {

// Each list is "any of"; lists on different axes must all match. Values are as in the
// matrix file or globs (docs/matrix.md, "Matching").
struct Filters {
  std::vector<std::string> version, torch, cuda, python, platform, profile, package, only;  // cuda: also rocm6.2
  std::vector<std::string> rocm;  // "6.2": the same as cuda "rocm6.2"
  [[nodiscard]] bool empty() const;
};

struct Shard {
  int index = 1;  // 1-based, as CI systems number parallel jobs
  int count = 1;
};
// "2/4" -> {2, 4}; nullopt unless 1 <= K <= N.
std::optional<Shard> parse_shard(const std::string& text);

// The cells and dropped cells the filters pick. A filter value that is not a value of its
// axis, or that matches no cell of the matrix at all (built or dropped), is a UserError
// (exit 2) naming the values the matrix has.
Expansion select_cells(const Expansion& all, const Filters& filters);
// The same, moving the picked cells out of `all` instead of copying them.
Expansion select_cells(Expansion&& all, const Filters& filters);

// What a cell is expected to cost, in arch-compiles: the shard balancer's weight.
double expected_cost(const Cell& cell);

// This shard's cells: every cell lands in exactly one of the N shards. Cells go, most
// expensive first (ties by id), to the shard with the least cost so far; the result keeps
// the input order. Deterministic for the same cells, whatever their order.
std::vector<Cell> shard_cells(const std::vector<Cell>& cells, const Shard& shard);
std::vector<Cell> shard_cells(std::vector<Cell>&& cells, const Shard& shard);  // moves them out

}  // namespace fabuild
