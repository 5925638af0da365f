#pragma once

// What every planned cell's run has, however it is built: its id, environment, share of the
// budget, time limits, and where its log, staging directory and wheels go; and the command that
// builds a package cell's wheel.

#include <filesystem>
#include <string>
#include <vector>

#include "app/plan.h"
#include "engine/runner.h"

namespace fabuild {

// The run of `p` with no steps yet; `wheelhouse` is the plan's.
CellRun base_cell_run(const PlannedCell& p, const std::string& wheelhouse);

// `setup.py bdist_wheel`, or `pip wheel` without build isolation (the matrix's frontend), run by
// the cell environment's `python` in the package's setup.py directory, leaving the wheel in `dist`.
std::vector<std::string> wheel_build_argv(Frontend frontend, const std::string& python,
                                          const std::filesystem::path& dist);

}  // namespace fabuild
