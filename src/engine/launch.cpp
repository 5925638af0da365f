#include "engine/launch.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "engine/budget.h"
#include "matrix/command.h"
#include "objcache/protocol.h"

namespace fabuild {

ProcessSpec step_process(const CellRun& cell, const Step& step, int jobs, const Environment& base_env,
                         int machine_cores, std::chrono::milliseconds time_left, const EnvList& extra) {
  std::map<std::string, std::string> values = cell.placeholders;
  values["max_jobs"] = std::to_string(jobs);
  values["nvcc_threads"] = std::to_string(cell.nvcc_threads);
  values["out"] = cell.staging_dir;
  // A gated cell's compiles fill its grant by their own recorded peaks; its own processes beside
  // them (setup.py with torch imported, ninja, the compiles waiting at the gate) get
  // kGateOverheadMb more out of the budget's reserve: in {memory_mb}, a container's cap.
  const double grant_mb = std::ceil(jobs * cell.demand.gb_per_job * 1024);
  values["memory_mb"] = fmt::format("{:.0f}", grant_mb + (cell.memory_gate ? kGateOverheadMb : 0));
  // Never more than the machine has: an engine refuses --cpus beyond it (--cores may claim more).
  const int wanted = jobs * std::max(1, cell.demand.threads_per_job);
  values["cores"] = std::to_string(machine_cores > 0 ? std::min(machine_cores, wanted) : wanted);
  Launch launch;
  for (const auto& arg : step.argv) launch.argv.push_back(step.templated ? expand_placeholders(arg, values) : arg);
  launch.env = cell.env;
  // The one place MAX_JOBS and NVCC_THREADS are set: from the share the scheduler granted.
  // CMAKE_BUILD_PARALLEL_LEVEL is the same MAX_JOBS for `cmake --build` (library cells). A gated
  // cell's MAX_JOBS is a window kGateWindow times wider: the memory gate is its scheduler, and
  // runs at most the granted `jobs` (wrapper_env::kSlots) within the grant's memory, by their own
  // recorded peaks, longest first (objcache/memory_gate.h).
  launch.env.emplace_back("MAX_JOBS", std::to_string(cell.memory_gate ? jobs * kGateWindow : jobs));
  launch.env.emplace_back("CMAKE_BUILD_PARALLEL_LEVEL", std::to_string(jobs));
  if (cell.nvcc_threads > 0) launch.env.emplace_back("NVCC_THREADS", std::to_string(cell.nvcc_threads));
  if (cell.memory_gate) {
    launch.env.emplace_back(objcache::wrapper_env::kMemoryMb, fmt::format("{:.0f}", grant_mb));
    launch.env.emplace_back(objcache::wrapper_env::kSlots, std::to_string(jobs));
  }
  launch.env.emplace_back("FABUILD_CELL_ID", cell.id);
  launch.env.emplace_back("FABUILD_OUT_DIR", cell.staging_dir);
  launch.env.insert(launch.env.end(), step.env.begin(), step.env.end());
  launch.env.insert(launch.env.end(), extra.begin(), extra.end());
  launch.cwd = step.cwd;
  if (cell.launch && !step.on_host) launch = cell.launch(launch);
  ProcessSpec spec;
  spec.argv = std::move(launch.argv);
  spec.env = base_env.with(launch.env).entries();
  spec.cwd = launch.cwd;
  spec.log_path = cell.log_path;
  spec.kill_grace = cell.kill_grace;
  if (cell.timeout.count() > 0) spec.timeout = std::max(std::chrono::milliseconds(1), time_left);
  return spec;
}

void log_step_start(Files& files, const std::string& log_path, const std::string& what,
                    const std::vector<std::string>& argv) {
  std::string line = "fabuild: step " + what + ":";
  for (const auto& a : argv) {
    const auto lines = std::count(a.begin(), a.end(), '\n');
    if (lines > 0) {
      line += fmt::format(" [<a program of {} lines>]", lines + (a.ends_with('\n') ? 0 : 1));
    } else {
      line += " [" + a + "]";
    }
  }
  (void)files.append(log_path, line + "\n");  // a log that cannot be written loses the line, not the build
}

void log_step_time(Files& files, const std::string& log_path, const std::string& step, std::chrono::milliseconds took) {
  const double seconds = std::chrono::duration<double>(took).count();
  (void)files.append(log_path, fmt::format("fabuild: step {} took {:.2f} s\n", step, seconds));
}

std::string go_file(const CellRun& cell, const Step& step) {
  return (std::filesystem::path(cell.staging_dir) / (".go-" + step.name)).string();
}

}  // namespace fabuild
