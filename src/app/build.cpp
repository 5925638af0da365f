#include "app/build.h"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <map>

#include "app/cell_run.h"
#include "app/host_build.h"
#include "engine/runner.h"

extern char** environ;

namespace fabuild {

namespace {

namespace fs = std::filesystem;
// A cell with a `command:` runs just that, with its values as placeholders.
CellRun command_run(const PlannedCell& p, const std::string& wheelhouse) {
  const Cell& cell = p.cell;
  CellRun run = base_cell_run(p, wheelhouse);
  run.steps = {Step{"command", cell.command, {}, {}, {}}};
  run.placeholders = {{"id", p.id},
                      {"version", cell.version.str()},
                      {"torch", cell.torch.str()},
                      {"cuda", cell.cuda.toolkit.str()},
                      {"python", cell.python.str()},
                      {"platform", to_string(cell.platform)},
                      {"archs", to_string(cell.archs)},
                      {"label", p.label}};
  return run;
}

}  // namespace

ExitCode build(const Plan& plan, const Options& options, std::ostream& out) {
  // Cells with a command run it; the others fabuild builds on the host (host_build.h).
  std::vector<CellRun> runs;
  std::vector<std::size_t> run_index;
  std::vector<std::size_t> host;
  for (std::size_t i = 0; i < plan.cells.size(); ++i) {
    if (plan.cells[i].cell.command.empty()) {
      host.push_back(i);
    } else {
      runs.push_back(command_run(plan.cells[i], plan.wheelhouse));
      run_index.push_back(i);
    }
  }
  HostBuild hb = host.empty() ? HostBuild{} : plan_host_build(plan, host, options.force);

  std::vector<CellOutcome> outcomes(plan.cells.size());
  for (std::size_t i = 0; i < plan.cells.size(); ++i) outcomes[i].id = plan.cells[i].id;
  for (std::size_t k = 0; k < hb.settled.size(); ++k) outcomes[hb.settled_index[k]] = hb.settled[k];

  const Budget& b = plan.budget;
  fmt::print(out, "fabuild: {} cell{} from {}; budget {:g} cores, {:.1f} GB\n", plan.cells.size(),
             plan.cells.size() == 1 ? "" : "s", plan.matrix_file, b.cores, b.memory_gb);
  out.flush();

  RunSettings settings;
  settings.fail_fast = options.fail_fast;
  settings.stream_output = options.verbose;
  settings.base_env = inherited_env(environ);
  const auto status = make_status_printer(out, ::isatty(STDOUT_FILENO) == 1);
  const auto supervisor = make_posix_supervisor();
  RunReport total;
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
    status->note(fmt::format("making {} Python environment{} first", hb.environments.size(),
                             hb.environments.size() == 1 ? "" : "s"));
    const RunReport envs = run_cells(hb.environments, b, settings, *supervisor, *status);
    total.elapsed += envs.elapsed;
    total.interrupt_signal = envs.interrupt_signal;
    std::map<std::string, const CellOutcome*> failed;
    for (const auto& e : envs.cells) {
      if (e.result != CellResult::kOk) failed[e.id] = &e;
    }
    for (std::size_t k = 0; k < hb.cells.size(); ++k) {
      const auto it = failed.find(hb.needs[k]);
      if (it == failed.end() || envs.interrupt_signal != 0) continue;
      CellOutcome& o = outcomes[hb.cell_index[k]];
      o.result = CellResult::kFailed;
      o.status.code = 1;
      o.step = "environment";
      o.message = fmt::format("Python environment {} could not be made; see {}", it->first, it->second->log_path);
    }
  }
  for (std::size_t k = 0; k < hb.cells.size(); ++k) {
    if (outcomes[hb.cell_index[k]].result == CellResult::kFailed) continue;
    runs.push_back(std::move(hb.cells[k]));
    run_index.push_back(hb.cell_index[k]);
  }
  if (total.interrupt_signal == 0 && !runs.empty()) {
    const RunReport report = run_cells(runs, b, settings, *supervisor, *status);
    total.elapsed += report.elapsed;
    total.interrupt_signal = report.interrupt_signal;
    for (std::size_t k = 0; k < runs.size(); ++k) outcomes[run_index[k]] = report.cells[k];
  }
  total.cells = std::move(outcomes);
  status->summary(total.cells, total.elapsed);
  std::error_code ec;
  fs::remove(fs::path(plan.wheelhouse) / ".staging", ec);  // only if no cell left anything there
  return total.exit_code();
}

}  // namespace fabuild
