#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/budget.h"
#include "matrix/cell.h"

namespace fabuild {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// The environment a cell's build gets on top of its toolchain's (CUDA_HOME, PATH): the
// package's build contract, filled from the cell and its job settings, then the matrix's env:.
EnvList cell_build_env(const Cell& cell, const JobSettings& jobs);

}  // namespace fabuild
