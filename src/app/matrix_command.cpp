#include "app/matrix_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/build.h"
#include "app/ci_matrix.h"
#include "app/msvc_capture.h"
#include "app/plan.h"
#include "app/rebuild_check.h"
#include "app/recorded_costs.h"
#include "app/render.h"
#include "costs/ci_estimate.h"
#include "util/error.h"
#include "util/text.h"

namespace fabuild {

namespace {

void report_nothing_selected(const Plan& plan, const Options& options) {
  if (options.shard) {
    // The filters picked cells; this shard's share of them is empty (more shards than rows).
    spdlog::error(
        "no cell selected: shard {}/{} is empty: the selected cells fill fewer shards (a row stays in one "
        "unless --split-rows); --allow-empty makes that exit 0",
        options.shard->index, options.shard->count);
    return;
  }
  if (plan.dropped.empty() && plan.matrix_cells == 0) {
    // Nothing to filter: the matrix itself has no cell, as a range of torch not yet released.
    const std::vector<std::string> empty = empty_ranges(plan.torch);
    spdlog::error("no cell selected: the matrix has no cell{}; --allow-empty makes that exit 0",
                  empty.empty() ? std::string() : ": " + join(empty, "; "));
    return;
  }
  if (plan.dropped.empty()) {
    spdlog::error("no cell selected: the filters and shard leave nothing to build");
    return;
  }
  spdlog::error("no cell selected: the {} cell{} the filters pick cannot be built:", plan.dropped.size(),
                plan.dropped.size() == 1 ? "" : "s");
  for (const auto& d : plan.dropped) spdlog::error("  {}: {}", d.cell.id(), join(d.reasons, "; "));
}

}  // namespace

ExitCode matrix_command(const Options& options, const System& system, std::ostream& out) {
  if (!options.ci_matrix.empty()) {
    return print_ci_matrix(
        options, out, system,
        [&](const std::vector<Cell>& cells, const RemoteCacheSettings& remote,
            const std::vector<Version>& torch_series) { return ci_costs(cells, remote, torch_series, system); });
  }
  if (options.rebuild_check && (options.compile_share || !options.verify_torch.empty() || options.prepare)) {
    throw config_error(Location{},
                       "--rebuild-check builds whole filed cells again; it does not combine with "
                       "--compile-share, --verify-torch or --prepare",
                       "run it on its own, with the filters that pick the cells to check");
  }
  Plan plan = make_plan(options, system);
  if (options.dry_run && !options.list) {  // the plan says where each host toolkit comes from
    const bool windows = system.platform == to_string(Platform::kWinAmd64);
    HostProbe probe(*system.commands, load_host_toolchains(host_toolchains_file(plan)), system.env, windows);
    resolve_toolkits(plan, probe, plan.cache_root / "toolkits");
    resolve_pythons(plan, probe);
    if (windows) {  // and the Visual Studio environment its cells build in
      MsvcCaptures captures(probe, plan.cache_root);
      resolve_msvc(plan, captures);
    }
  }
  if (options.list || options.dry_run) count_units(plan);  // what the plan and its JSON show
  const bool plan_shows_warnings = options.dry_run && !options.list && options.format == OutputFormat::kTable;
  if (!plan_shows_warnings) {
    for (const auto& w : plan.warnings) spdlog::warn("{}", w);
  }

  if (options.list) {
    if (options.format == OutputFormat::kJson) {
      nlohmann::ordered_json cells = nlohmann::ordered_json::array();
      for (const auto& c : plan.cells) cells.push_back(cell_json(plan, c));
      out << cells.dump(2) << "\n";
    } else {
      print_cell_table(plan, out);
    }
  } else if (options.dry_run) {
    if (options.format == OutputFormat::kJson) {
      out << plan_json(plan).dump(2) << "\n";
    } else {
      print_plan(plan, *system.files, out, options.verbose);
    }
  }

  if (plan.cells.empty() && !options.allow_empty) {
    report_nothing_selected(plan, options);
    return kExitNoCellSelected;
  }
  if (options.list || options.dry_run) return kExitOk;
  if (options.rebuild_check) return rebuild_check(std::move(plan), options, system, out);

  return build(plan, options, system, out);
}

}  // namespace fabuild
