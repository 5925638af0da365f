#pragma once

// Picking cells from an expanded matrix: filter flags, --only, and --shard.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "matrix/expand.h"

namespace fabuild {

// Each list is "any of"; lists on different axes must all match. Values are as in the
// matrix file or globs (docs/matrix.md, "Matching").
struct Filters {
  // A filter flag's values by the axis it picks on (matrix/axes.h names each axis's flag: --fa,
  // --torch, ...; --cuda also takes rocm6.2). --torch and --python pick wheels only.
  std::map<Axis, std::vector<std::string>> axes;
  std::vector<std::string> rocm;  // --rocm: "6.2" is --cuda rocm6.2
  std::vector<std::string> only;  // --only: cell ids or globs
  std::vector<std::string>& operator[](Axis axis) { return axes[axis]; }
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

// The cells that compile the same kernels, differing only in their Python tag, share a row:
// its name is the first's id with "*" for the Python tag ("fa2.8.3-torch2.8-cu128-*-linux_x86_64"),
// plus its archs. The object cache makes a row's later tags nearly free where they are built
// together (app/object_cache.h), so shards and CI jobs keep a row whole unless asked not to.
std::string row_of(const Cell& cell);
// Each cell of a row after its first costs this share of the first: its kernels come from the
// object cache (FlashAttention 2.8.3, measured: 72 s for the second tag against 1236 s).
inline constexpr double kExtraTagCost = 0.06;
enum class Rows { kKeep, kSplit };
// The cells grouped by row, each group in input order, groups in the order of their first cell.
std::vector<std::vector<std::size_t>> rows_of(const std::vector<Cell>& cells);
// A row's expected cost: its costliest cell, plus kExtraTagCost of that per other cell.
double row_cost(const std::vector<Cell>& cells, const std::vector<std::size_t>& row);
// What shards and CI jobs hold whole: the rows, or with Rows::kSplit each cell alone.
std::vector<std::vector<std::size_t>> units_of(const std::vector<Cell>& cells, Rows rows);
// Every one of `count` shards' cells (indices, in input order), from one assignment: what
// shard_cells gives for each K, without assigning the cells again for each.
std::vector<std::vector<std::size_t>> shard_all(const std::vector<Cell>& cells, int count, Rows rows = Rows::kKeep);

// This shard's cells: every cell lands in exactly one of the N shards. Rows (or, with
// Rows::kSplit, single cells) go, most expensive first (ties by id), to the shard with the least
// cost so far; the result keeps the input order. Deterministic for the same cells, whatever
// their order.
std::vector<Cell> shard_cells(const std::vector<Cell>& cells, const Shard& shard, Rows rows = Rows::kKeep);
std::vector<Cell> shard_cells(std::vector<Cell>&& cells, const Shard& shard,
                              Rows rows = Rows::kKeep);  // moves them out

}  // namespace fabuild
