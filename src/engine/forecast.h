#pragma once

// The scheduler's decisions for a whole matrix, ahead of time, for the plan (--dry-run):
// each cell's MAX_JOBS and which cells start at once. A cell is assumed to take time in
// proportion to its cost over its jobs; the real run decides as cells really finish.

#include <optional>
#include <string>
#include <vector>

#include "engine/scheduler.h"
#include "matrix/cell.h"

namespace fabuild {

Demand demand_of(const Cell& cell, const JobSettings& shape);

struct Forecast {
  std::vector<JobSettings> jobs;  // per cell, in the cells' order
  std::size_t at_once = 0;        // cells started together at the beginning
};

// Which cell each comes after: the first cell of its row (cells with the same non-empty key),
// in the given order; nullopt for a row's first and for cells with an empty key. The plan
// and the run both take their order from this, over the same keys (app/object_cache.h's
// compile_row), so --dry-run's MAX_JOBS are the run's.
std::vector<std::optional<std::size_t>> after_first_of_row(const std::vector<std::string>& rows);

// `after` (empty, or one per cell): the cells that wait for their row's first to compile.
Forecast forecast(const std::vector<Cell>& cells, const Budget& budget,
                  const std::vector<std::optional<std::size_t>>& after = {});
// The same with each cell's shape given (job_shape's, or one the plan changed: recorded peaks).
Forecast forecast(const std::vector<Cell>& cells, std::vector<JobSettings> shapes, const Budget& budget,
                  const std::vector<std::optional<std::size_t>>& after = {});

}  // namespace fabuild
