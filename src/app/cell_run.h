#pragma once

// What every planned cell's run has, however it is built: its id, environment, share of the
// budget, time limits, and where its log, staging directory and wheels go.

#include <string>

#include "app/plan.h"
#include "engine/runner.h"

namespace fabuild {

// The run of `p` with no steps yet; `wheelhouse` is the plan's.
CellRun base_cell_run(const PlannedCell& p, const std::string& wheelhouse);

}  // namespace fabuild
