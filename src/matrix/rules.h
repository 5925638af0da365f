#pragma once

// The compatibility rules: what a cell resolves to, and why it cannot be built.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "matrix/cell.h"
#include "matrix/compat.h"

namespace fabuild {

// What `cxx11_abi: auto` means for this torch series and platform.
Abi default_abi(const Cell& cell, const CompatTables& compat);

// torch's CUDA build the wheel is for: the explicit one if the CUDA set names it, else the
// nearest build of this torch series not newer than the toolkit, with the same major.
// nullopt when torch has no such build (drop_reasons says why); the toolkit itself when
// the tables do not know this torch series.
std::optional<Version> pick_torch_cuda(const Cell& cell, const CompatTables& compat);

// Sets abi (from auto), default_abi and torch_cuda.
void resolve(Cell& cell, const CompatTables& compat);
// Sets abi (from auto) and default_abi only: resolve() for a cell whose torch_cuda is set.
void resolve_abi(Cell& cell, const CompatTables& compat);

// Where torch comes from: pip's configured index (no `torch_index:`), whose torch wheels are
// PyPI's (one CUDA build per series), or an index or directory the matrix names.
enum class TorchFrom : std::uint8_t { kPipIndex, kTorchIndex };

// The same for a library cell (artifact: library): no torch or Python to check, and only what
// the library recipe builds: CUDA, on Linux.
std::vector<std::string> library_drop_reasons(const Cell& cell, const CompatTables& compat);

// Every reason this resolved cell cannot be built, in words for the plan; empty if it can.
std::vector<std::string> drop_reasons(const Cell& cell, const CompatTables& compat,
                                      TorchFrom torch_from = TorchFrom::kTorchIndex);

// drop_reasons for the cells of a matrix, asked in the order they were made: what the cells
// of one row share (package, setup, version, torch, GPU set, torch's build, provision) is
// checked once for the row, and only the rest (Python, ABI, platform) once a cell. The same
// reasons in the same order as drop_reasons gives; a plan asks 100 000 cells.
class DropRules {
 public:
  DropRules(const CompatTables& compat, TorchFrom torch_from) : compat_(compat), torch_from_(torch_from) {}
  std::vector<std::string> reasons(const Cell& cell);

 private:
  struct Row;
  const CompatTables& compat_;
  TorchFrom torch_from_;
  std::shared_ptr<const Row> row_;  // the last row's; replaced when a cell of another comes
};

}  // namespace fabuild
