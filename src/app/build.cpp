#include "app/build.h"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "engine/forecast.h"
#include "engine/runner.h"
#include "wheel/layout.h"

extern char** environ;

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr double kDefaultKillGraceS = 10;

milliseconds ms(double seconds) { return milliseconds(static_cast<long long>(seconds * 1000)); }

CellRun cell_run(const PlannedCell& p, const std::string& wheelhouse) {
  const Cell& cell = p.cell;
  if (cell.command.empty()) {
    throw UserError(kExitBadConfig, Location{},
                    fmt::format("cell {} has no command, and this fabuild cannot yet build {} from its source", p.id,
                                cell.package->name),
                    "give the matrix (or an include entry) a command: [program, args...] to run for each cell");
  }
  CellRun run;
  run.id = p.id;
  run.steps = {Step{"command", cell.command, {}, {}, {}}};
  run.placeholders = {{"id", p.id},
                      {"version", cell.version.str()},
                      {"torch", cell.torch.str()},
                      {"cuda", cell.cuda.toolkit.str()},
                      {"python", cell.python.str()},
                      {"platform", to_string(cell.platform)},
                      {"archs", to_string(cell.archs)},
                      {"label", p.label}};
  run.env = p.env;
  run.demand = demand_of(cell, p.jobs);
  run.nvcc_threads = p.jobs.nvcc_threads;
  run.timeout = ms(cell.build.timeout_s.value_or(0));
  run.kill_grace = ms(cell.build.kill_grace_s.value_or(kDefaultKillGraceS));
  const fs::path root(wheelhouse);
  run.log_path = (root / "logs" / (p.id + ".log")).string();
  run.staging_dir = fs::absolute(root / ".staging" / p.id).string();
  run.output_dir = (root / wheelhouse_subdir(cell)).string();
  return run;
}

}  // namespace

ExitCode build(const Plan& plan, const Options& options, std::ostream& out) {
  std::vector<CellRun> runs;
  for (const auto& p : plan.cells) runs.push_back(cell_run(p, plan.wheelhouse));

  const Budget& b = plan.budget;
  fmt::print(out, "fabuild: {} cell{} from {}; budget {:g} cores, {:.1f} GB\n", runs.size(), runs.size() == 1 ? "" : "s",
             plan.matrix_file, b.cores, b.memory_gb);
  out.flush();

  RunSettings settings;
  settings.fail_fast = options.fail_fast;
  settings.stream_output = options.verbose;
  settings.base_env = inherited_env(environ);
  const auto status = make_status_printer(out, ::isatty(STDOUT_FILENO) == 1);
  const auto supervisor = make_posix_supervisor();
  const RunReport report = run_cells(runs, b, settings, *supervisor, *status);
  status->summary(report.cells, report.elapsed);
  std::error_code ec;
  fs::remove(fs::path(plan.wheelhouse) / ".staging", ec);  // only if no cell left anything there
  return report.exit_code();
}

}  // namespace fabuild
