#include "engine/forecast.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <tuple>

#include "matrix/select.h"

namespace fabuild {

Demand demand_of(const Cell& cell, const JobSettings& shape) {
  return Demand{expected_cost(cell), shape.gb_per_job, std::max(1, shape.nvcc_threads), shape.jobs_cap};
}

std::vector<std::optional<std::size_t>> after_first_of_row(const std::vector<std::string>& rows) {
  std::vector<std::optional<std::size_t>> after(rows.size());
  std::map<std::string, std::size_t> first;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k].empty()) continue;
    const auto [it, inserted] = first.emplace(rows[k], k);
    if (!inserted) after[k] = it->second;
  }
  return after;
}

Forecast forecast(const std::vector<Cell>& cells, const Budget& budget,
                  const std::vector<std::optional<std::size_t>>& after) {
  std::vector<JobSettings> shapes;
  shapes.reserve(cells.size());
  for (const auto& cell : cells) shapes.push_back(job_shape(cell));
  return forecast(cells, std::move(shapes), budget, after);
}

Forecast forecast(const std::vector<Cell>& cells, std::vector<JobSettings> shapes, const Budget& budget,
                  const std::vector<std::optional<std::size_t>>& after) {
  Forecast f;
  std::vector<Demand> demands;
  std::vector<double> costs;  // the demands', kept here: the scheduler takes the demands
  f.jobs = std::move(shapes);
  demands.reserve(cells.size());
  costs.reserve(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    demands.push_back(demand_of(cells[i], f.jobs[i]));
    if (i < after.size()) demands.back().after = after[i];
    costs.push_back(demands.back().cost);
  }
  Scheduler scheduler(budget, std::move(demands));
  // When each running cell ends: the earliest first, and of equal times the one started first.
  using End = std::tuple<double, std::size_t, std::size_t>;  // time, start order, cell
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  std::size_t started = 0;
  double now = 0;
  bool first = true;
  while (!scheduler.done()) {
    for (const Grant& g : scheduler.start_more()) {
      JobSettings& j = f.jobs[g.cell];
      j.max_jobs = g.max_jobs;
      if (!g.note.empty()) j.notes.push_back(g.note);
      ends.emplace(now + costs[g.cell] / g.max_jobs, started++, g.cell);
      if (first) ++f.at_once;
    }
    first = false;
    if (ends.empty()) break;  // cannot happen: the scheduler always starts a cell when none runs
    now = std::get<0>(ends.top());
    scheduler.finish(std::get<2>(ends.top()));
    ends.pop();
  }
  return f;
}

}  // namespace fabuild
