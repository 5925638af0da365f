#include "app/build.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <map>

#include "app/cell_run.h"
#include "app/command_wheel.h"
#include "app/compile_steps.h"
#include "app/probation_steps.h"
#include "app/publish_build.h"
#include "app/recovery.h"
#include "app/site_build.h"
#include "app/wheelhouse_guard.h"
#include "engine/runner.h"
#include "matrix/axes.h"
#include "publish/run_record.h"
#include "util/text.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
// A cell with a `command:` runs just that, with its values as placeholders.
CellRun command_run(const PlannedCell& p, const std::string& wheelhouse, std::shared_ptr<const Files> files) {
  const Cell& cell = p.cell;
  CellRun run = base_cell_run(p, wheelhouse);
  Step command{"command", cell.command(), {}, {}, {}};
  command.templated = true;  // {out}, {max_jobs}... (docs/matrix.md)
  run.steps = {std::move(command)};
  add_command_wheel_filing(run, p, wheelhouse, std::move(files));
  run.placeholders = {{"id", p.id},
                      {"version", cell.version.str()},
                      {"torch", cell.torch.str()},
                      {"cuda", cell.cuda.toolkit.str()},
                      {"python", cell.python.str()},
                      {"platform", to_string(cell.platform)},
                      {"archs", to_string(cell.archs())},
                      {"label", p.label()}};
  for (const AxisRow* row : declared_axes()) run.placeholders[std::string(row->key)] = cell.value(row->axis);
  return run;
}

}  // namespace

ExitCode build(const Plan& plan, const Options& options, const System& system, std::ostream& out) {
  // One run at a time per wheelhouse, held until the index is published; then undo or finish
  // what a killed run left (app/recovery.h) before looking at what is filed.
  // A wheelhouse that cannot be made (under a file, in /proc) is the person's input to fix: exit
  // 2, as one that is a file is (plan.cpp), not a lock that failed.
  if (const Expected<void> made = system.files->create_directories(plan.wheelhouse); !made) {
    throw config_error(Location{options.output_dir ? std::string() : plan.matrix_file},
                       "the wheelhouse cannot be made: " + made.error().what,
                       options.output_dir ? "give -o a directory that can be made and written"
                                          : "set wheelhouse: to a directory that can be made and written");
  }
  const auto lock = lock_wheelhouse(plan.wheelhouse, "fabuild " + plan.matrix_as_read(), options.wait_lock, out);
  if (const Recovery recovered = recover_wheelhouse(*system.files, system.kill_tagged, plan.wheelhouse);
      !recovered.empty()) {
    fmt::print(out, "fabuild: {}\n", recovered.describe());
  }
  const auto began = system.steady_now();
  const std::string began_utc = system.utc_now();
  // Cells with a command run it; the others fabuild builds itself, on the host or in a
  // container (site_build.h).
  std::vector<CellRun> runs;
  std::vector<std::size_t> run_index;
  std::vector<std::size_t> host;
  for (std::size_t i = 0; i < plan.cells.size(); ++i) {
    if (plan.cells[i].cell.command().empty()) {
      host.push_back(i);
    } else {
      runs.push_back(command_run(plan.cells[i], plan.wheelhouse, system.files));
      run_index.push_back(i);
    }
  }
  SiteBuild hb = host.empty() ? SiteBuild{} : plan_site_build(plan, host, options.force, system);

  std::vector<CellOutcome> outcomes(plan.cells.size());
  for (std::size_t i = 0; i < plan.cells.size(); ++i) outcomes[i].id = plan.cells[i].id;
  for (std::size_t k = 0; k < hb.settled.size(); ++k) outcomes[hb.settled_index[k]] = hb.settled[k];

  const Budget& b = plan.budget;
  fmt::print(out, "fabuild: {} cell{} from {}; budget {:g} cores, {:.1f} GB\n", plan.cells.size(),
             plan.cells.size() == 1 ? "" : "s", plan.matrix_as_read(), b.cores, b.memory_gb);
  out.flush();

  RunSettings settings;
  settings.fail_fast = options.fail_fast;
  settings.stream_output = options.verbose;
  settings.base_env = inherited_env(system.env);
  settings.machine_cores = plan.machine_cores;
  settings.origin = began;  // start and release times, for the timeline, count from here
  const auto printer = make_status_printer(out, system.stdout_is_terminal);
  StatusPrinter* const status = printer.get();
  const auto supervisor = system.make_supervisor();
  RunReport total;
  std::vector<CellOutcome> preparation;
  std::map<std::string, double> gb_per_job;
  for (const auto& note : hb.notes) status->note(note);
  Progress progress{plan.cells.size(), 0, 0, 0};
  for (const auto& o : hb.settled) {
    ++progress.done;
    if (o.result == CellResult::kFailed) {
      ++progress.failed;
      status->finished(o, {}, progress);
    }
  }

  if (!hb.environments.empty()) {
    const auto toolkits = static_cast<std::size_t>(std::count_if(
        hb.environments.begin(), hb.environments.end(), [](const CellRun& e) { return e.kind == RunKind::kToolkit; }));
    const std::size_t venvs = hb.environments.size() - toolkits;
    std::vector<std::string> what;
    if (venvs > 0) what.push_back(fmt::format("{} Python environment{}", venvs, venvs == 1 ? "" : "s"));
    if (toolkits > 0) what.push_back(fmt::format("{} CUDA toolkit{} from PyPI", toolkits, toolkits == 1 ? "" : "s"));
    status->note(fmt::format("making {} first", join(what, " and ")));
    const RunReport envs = run_cells(hb.environments, b, settings, *supervisor, *system.files, *status);
    preparation = envs.cells;
    for (const auto& e : hb.environments) gb_per_job[e.id] = e.demand.gb_per_job;
    total.elapsed += envs.elapsed;
    total.interrupt_signal = envs.interrupt_signal;
    for (std::size_t k = 0; k < hb.cells.size() && envs.interrupt_signal == 0; ++k) {
      for (const std::size_t need : hb.needs[k]) {
        const CellOutcome& made = envs.cells[need];
        if (made.result == CellResult::kOk) continue;
        const CellRun& prepared_run = hb.environments[need];
        const bool toolkit = prepared_run.kind == RunKind::kToolkit;
        CellOutcome& o = outcomes[hb.cell_index[k]];
        o.result = CellResult::kFailed;
        o.status.code = 1;
        o.step = toolkit ? "toolkit" : "environment";
        o.message = fmt::format("{} {} could not be {}; see {}", toolkit ? "CUDA toolkit" : "Python environment",
                                prepared_run.subject, toolkit ? "installed" : "made", made.log_path);
        break;
      }
    }
  }
  if (options.prepare) {  // the environments and toolkits the cells need, and no cell
    RunReport prepared{preparation, total.interrupt_signal, total.elapsed};
    const auto ready = std::count_if(preparation.begin(), preparation.end(),
                                     [](const CellOutcome& o) { return o.result == CellResult::kOk; });
    fmt::print(out, "fabuild: {} of {} Python environments and toolkits made in {:.0f}s; no cell built (--prepare)\n",
               ready, preparation.size(), std::chrono::duration<double>(total.elapsed).count());
    system.files->remove(std::filesystem::path(plan.wheelhouse) / ".staging");  // only if nothing was left there
    return prepared.exit_code();
  }
  for (std::size_t k = 0; k < hb.cells.size(); ++k) {
    if (outcomes[hb.cell_index[k]].result == CellResult::kFailed) continue;
    runs.push_back(std::move(hb.cells[k]));
    run_index.push_back(hb.cell_index[k]);
  }
  if (hb.object_cache) {
    std::vector<std::string> rows;
    for (const std::size_t i : run_index) rows.push_back(plan.cells[i].row);
    first_of_each_row_first(runs, rows);
  }
  if (total.interrupt_signal == 0 && !runs.empty()) {
    const RunReport report = run_cells(runs, b, settings, *supervisor, *system.files, *status);
    total.elapsed += report.elapsed;
    total.interrupt_signal = report.interrupt_signal;
    for (std::size_t k = 0; k < runs.size(); ++k) outcomes[run_index[k]] = report.cells[k];
  }
  total.cells = std::move(outcomes);
  status->summary(total.cells, total.elapsed);
  if (hb.object_cache) {
    finish_object_cache(plan.cache, object_cache_report(hb.compiles), out);
    print_remote_cache(plan.remote_cache, remote_cache_report(total.cells), out);
    print_probation_retries(total.cells, out);
    print_compile_shares(total.cells, out);
  }
  if (!plan.cache_root.empty()) finish_entry_caches(plan.cache_root, out);
  system.files->remove(fs::path(plan.wheelhouse) / ".staging");  // only if no cell left anything there
  FinishedRun finished;
  finished.started = began_utc;
  finished.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(system.steady_now() - began);
  finished.exit_code = total.exit_code();
  finished.cells = &total.cells;
  finished.preparation = &preparation;
  finished.gb_per_job = std::move(gb_per_job);
  return publish_build(plan, finished, *system.files, out);
}

}  // namespace fabuild
