#include "engine/forecast.h"

#include <map>

#include "matrix/select.h"

namespace fabuild {

Demand demand_of(const Cell& cell, const JobSettings& shape) {
  return Demand{expected_cost(cell), shape.gb_per_job, shape.nvcc_threads, cell.build.max_jobs};
}

Forecast forecast(const std::vector<Cell>& cells, const Budget& budget) {
  Forecast f;
  std::vector<Demand> demands;
  for (const auto& cell : cells) {
    f.jobs.push_back(job_shape(cell));
    demands.push_back(demand_of(cell, f.jobs.back()));
  }
  Scheduler scheduler(budget, demands);
  std::multimap<double, std::size_t> ends;  // time -> cell
  double now = 0;
  bool first = true;
  while (!scheduler.done()) {
    for (const Grant& g : scheduler.start_more()) {
      JobSettings& j = f.jobs[g.cell];
      j.max_jobs = g.max_jobs;
      if (!g.note.empty()) j.notes.push_back(g.note);
      ends.emplace(now + demands[g.cell].cost / g.max_jobs, g.cell);
      if (first) ++f.at_once;
    }
    first = false;
    if (ends.empty()) break;  // cannot happen: the scheduler always starts a cell when none runs
    now = ends.begin()->first;
    scheduler.finish(ends.begin()->second);
    ends.erase(ends.begin());
  }
  return f;
}

}  // namespace fabuild
