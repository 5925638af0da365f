#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "matrix/cell.h"

namespace fabuild {

struct DroppedCell {
  Cell cell;
  std::vector<std::string> reasons;
};

// The cells a matrix describes, in the order the file lists its axes.
struct Expansion {
  std::vector<Cell> cells;  // buildable
  // cells[i].id(), spelled once for the duplicate check and kept for the plan, which would
  // spell 100 000 of them again; select_cells keeps it in step. Empty when not known: code
  // that changes `cells` clears it.
  std::vector<std::string> ids;
  std::vector<DroppedCell> dropped;  // impossible by the compatibility rules, with why
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // e.g. the Python tags an abi3 cell stands for
  // By stable-ABI cell id (docs/stable-abi.md): the matrix's torch series its one wheel stands
  // for, oldest first, and those it cannot be built against with why ("torch 2.10: ...").
  struct Served {
    std::vector<std::string> series;
    std::vector<std::pair<std::string, std::string>> not_built;  // series, why
  };
  std::map<std::string, Served> stable;
};

struct ExpandOptions {
  // Cells that collapse into an earlier one (same wheel, same build) are an error, not dropped.
  bool strict = false;
};

// Cross product -> exclude -> include -> resolve -> compatibility rules (docs/matrix.md).
// A cell that would file the same wheel as an earlier one, built the same way, is dropped
// with a reason naming the kept one. Throws a UserError (exit 2) for an include that matches
// no cell and cannot form one, for two different builds of one wheel, and under `strict` for
// any collapse.
Expansion expand(const MatrixSpec& spec, const ExpandOptions& options = {});

}  // namespace fabuild
