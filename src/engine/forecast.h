#pragma once

// The scheduler's decisions for a whole matrix, ahead of time, for the plan (--dry-run):
// each cell's MAX_JOBS and which cells start at once. A cell is assumed to take time in
// proportion to its cost over its jobs; the real run decides as cells really finish.

#include <vector>

#include "engine/scheduler.h"
#include "matrix/cell.h"

namespace fabuild {

Demand demand_of(const Cell& cell, const JobSettings& shape);

struct Forecast {
  std::vector<JobSettings> jobs;  // per cell, in the cells' order
  std::size_t at_once = 0;        // cells started together at the beginning
};

Forecast forecast(const std::vector<Cell>& cells, const Budget& budget);

}  // namespace fabuild
