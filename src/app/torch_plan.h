#pragma once

// The torch part of a plan (docs/stable-abi.md): the releases each stable-ABI cell's wheel is
// checked under and the note that says what it stands for; --verify-torch's releases; and, for a
// wheel already filed, what is left to check without compiling.

#include <string>
#include <vector>

#include "app/plan.h"
#include "app/torch_window.h"
#include "matrix/expand.h"

namespace fabuild {

// plan.sweeps[p.id] for a stable-ABI cell, and a note on its window.
void plan_sweep(Plan& plan, const PlannedCell& p, const TorchResolution& torch, const Expansion::Served& served);

// --verify-torch: plan.sweeps[p.id] is the index's release of each of `series` of the cell's
// CUDA major; a warning names those it has none of.
void plan_verify(Plan& plan, const PlannedCell& p, const TorchResolution& torch,
                 const std::vector<std::string>& series);

// For each stable-ABI cell whose wheel the wheelhouse's manifest records: plan.pending_checks
// gets the releases of its sweep that its proofs lack (a torch published since), and a note says
// so: a build of such a cell checks the filed wheel under those and compiles nothing.
void note_filed_checks(Plan& plan);

}  // namespace fabuild
