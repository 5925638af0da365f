#pragma once

// Which wheel cells build one wheel for a torch window against torch's stable ABI (the source's
// facts in PackagePreset::stable, the matrix's `stable_abi:`), and the variables such a build
// sets (docs/stable-abi.md).

#include <string>
#include <vector>

#include "matrix/cell.h"

namespace fabuild {

// Whether `cell` (a wheel cell, before it is marked) can be a stable-ABI cell under `mode`, and
// if not, why, in words taken from its source.
struct StableVerdict {
  bool can = false;
  std::string why;             // "" when it can
  bool profile_keeps = false;  // only its profile keeps a switch the stable build needs off
};
// `switches_off`: what the cell's profile turns off.
StableVerdict stable_verdict(const Cell& cell, const std::vector<std::string>& switches_off, StableMode mode);

// Whether the matrix can have stable-ABI cells at all: its package's source builds against
// torch's stable ABI and stable_abi is true, or auto with needs a profile can meet (an opt-in
// of the source's own is taken under true only). What makes the plan ask the torch index.
bool may_have_stable_cells(const MatrixSpec& spec);

// The variables a stable-ABI cell's build sets to "TRUE": the source's needs (a profile switch's
// variable, or its own opt-in). Empty for any other cell.
std::vector<std::string> stable_build_variables(const Cell& cell);

}  // namespace fabuild
