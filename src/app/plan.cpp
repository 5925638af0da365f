#include "app/plan.h"

#include <filesystem>

#include "engine/forecast.h"
#include "matrix/loader.h"
#include "wheel/layout.h"

namespace fabuild {

namespace {

BudgetSpec effective_budget(const MatrixSpec& spec, const Options& o) {
  BudgetSpec b = spec.budget;
  if (o.cores) b.cores = o.cores;
  if (o.memory_gb) b.memory_gb = o.memory_gb;
  if (o.jobs) b.jobs = o.jobs;
  return b;
}

}  // namespace

Plan make_plan(const Options& options, const Resources& machine) {
  const MatrixSpec spec = load_matrix(options.matrix);
  const Expansion all = expand(spec);
  Expansion picked = select_cells(all, options.filters);

  Plan plan;
  plan.matrix_file = options.matrix;
  plan.package = spec.package->name;
  plan.wheelhouse = options.output_dir.value_or(spec.wheelhouse);
  plan.matrix_cells = all.cells.size();
  plan.shard = options.shard;
  plan.budget = make_budget(machine, effective_budget(spec, options));
  plan.warnings = picked.warnings;
  plan.dropped = std::move(picked.dropped);
  plan.source = spec.source;
  plan.torch_index = spec.torch_index;
  plan.frontend = spec.frontend;
  plan.matrix_dir = std::filesystem::absolute(options.matrix).parent_path().string();

  const std::vector<Cell> cells = options.shard ? shard_cells(picked.cells, *options.shard) : picked.cells;
  const Forecast forecast_ = forecast(cells, plan.budget);
  plan.at_once = forecast_.at_once;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Cell& cell = cells[i];
    PlannedCell p;
    p.cell = cell;
    p.id = cell.id();
    p.label = local_label(cell);
    p.wheel_path = (std::filesystem::path(plan.wheelhouse) / wheelhouse_subdir(cell) / wheel_filename(cell)).string();
    p.toolchain = plan_toolchain(cell);
    p.source = plan_source(cell, spec.source);
    p.jobs = forecast_.jobs[i];
    p.env = cell_build_env(cell, p.jobs);
    plan.cells.push_back(std::move(p));
  }
  return plan;
}

}  // namespace fabuild
