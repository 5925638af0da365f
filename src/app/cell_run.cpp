#include "app/cell_run.h"

#include <filesystem>
#include <iterator>

#include "engine/forecast.h"
#include "wheel/layout.h"

namespace fabuild {

namespace {

constexpr double kDefaultKillGraceS = 10;

std::chrono::milliseconds ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

}  // namespace

CellRun base_cell_run(const PlannedCell& p, const std::string& wheelhouse) {
  namespace fs = std::filesystem;
  const Cell& cell = p.cell;
  CellRun run;
  run.id = p.id;
  run.env = p.env();
  run.demand = demand_of(cell, p.jobs);
  run.nvcc_threads = p.jobs.nvcc_threads;
  run.memory_gate = p.jobs.memory_gate;
  run.timeout = ms(cell.build().timeout_s.value_or(0));
  run.kill_grace = ms(cell.build().kill_grace_s.value_or(kDefaultKillGraceS));
  const fs::path root(wheelhouse);
  run.log_path = (root / "logs" / (p.id + ".log")).string();
  run.staging_dir = fs::absolute(root / ".staging" / p.id).string();
  run.output_dir = (root / wheelhouse_subdir(cell)).string();
  return run;
}

std::vector<std::string> wheel_build_argv(Frontend frontend, const std::string& python,
                                          const std::filesystem::path& dist) {
  if (frontend == Frontend::kPipWheel) {
    return {python, "-m",          "pip", "wheel", "--no-build-isolation", "--no-deps", "--disable-pip-version-check",
            "-w",   dist.string(), "."};
  }
  return {python, "setup.py", "bdist_wheel", "--dist-dir", dist.string()};
}

std::vector<std::string> with_fixed_umask(std::vector<std::string> argv) {
  // $0 is the shell's name in its messages; "$@" is argv, word for word.
  std::vector<std::string> wrapped = {"/bin/sh", "-c", "umask 022 && exec \"$@\"", "fabuild-build"};
  wrapped.insert(wrapped.end(), std::make_move_iterator(argv.begin()), std::make_move_iterator(argv.end()));
  return wrapped;
}

}  // namespace fabuild
