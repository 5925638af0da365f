#include "app/preparation.h"

#include <filesystem>

#include <fmt/format.h>

#include "app/container_site.h"
#include "app/recovery.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

std::string log_path(const Preparing& build, const std::string& name) {
  return (fs::path(build.wheelhouse) / "logs" / (name + ".log")).string();
}

std::string staging_dir(const Preparing& build, const std::string& name) {
  return fs::absolute(fs::path(build.wheelhouse) / ".staging" / name).string();
}

// The first step of a claimed entry's run: what a maker that died left of it goes, its
// processes first (app/recovery.h).
Step clear_step(const std::string& entry, std::shared_ptr<Files> files, KillTagged kill_tagged) {
  return Step{"clear", {}, {}, {}, [entry, files, kill_tagged](StepContext& context) -> StepResult {
                const std::vector<long> killed = clear_entry(*files, kill_tagged, entry);
                if (!killed.empty()) {
                  files->append(context.cell.log_path,
                                fmt::format("fabuild: killed {} leftover process{} of a run that died making {}\n",
                                            killed.size(), killed.size() == 1 ? "" : "es", entry));
                }
                return {};
              }};
}

}  // namespace

CellRun environment_run(const std::string& id, const PythonEnv& env, const Site& site, const Preparing& build) {
  CellRun run;
  run.id = id;
  run.kind = RunKind::kEnvironment;
  run.subject = id;
  const std::string venv = env.venv;
  run.claim = EntryClaim{venv, fmt::format("making Python environment {} for fabuild {}", env.key, build.matrix_file),
                         [venv] { return venv_ready(venv); }};
  run.env.emplace_back(kCacheEntryVariable, entry_tag(venv));
  run.steps.push_back(clear_step(venv, build.files, build.kill_tagged));
  for (const SetupCommand& command : env.setup) {
    run.steps.push_back(Step{command.name, command.argv, {}, command.env, {}});
  }
  // A container cell checks every time: its interpreter lives in the image, and nothing of this
  // machine's cache is writable there.
  const std::string stamps = site.container ? std::string() : build.check_stamps;
  run.steps.push_back(Step{"check", torch_check_argv(env, "-", stamps), {}, {}, {}});
  run.steps.push_back(Step{"ready", {}, {}, {}, [venv](StepContext&) -> StepResult {
                             mark_venv_ready(venv);  // last: until then the entry is not made
                             return {};
                           }});
  run.demand = Demand{1, 3.0, 1, 1};  // pip: a core and a little memory
  // torch and its CUDA libraries as installed (du, 2026-11-28): torch 2.11 4.5 GB, 2.14 5.3 GB; and
  // what the installer holds meanwhile.
  run.disk_need = std::uint64_t{6} << 30;
  run.log_path = log_path(build, "env-" + id);
  run.staging_dir = staging_dir(build, "env-" + id);
  run.output_dir = env.venv;
  run.kill_grace = std::chrono::seconds(10);
  if (site.container) {
    std::vector<Mount> mounts = {Mount{site.venv_root, site.venv_root, false}};
    if (!build.torch_index.empty() && build.torch_index.front() == '/') {
      mounts.push_back(Mount{build.torch_index, build.torch_index, true});
    }
    run_in_container(run, *site.container, std::move(mounts), build.files);
  }
  return run;
}

CellRun toolkit_install_run(const PipToolkit& toolkit, const Interpreter& python, const Preparing& build) {
  CellRun run;
  run.id = "toolkit-" + toolkit.name();  // its log's and staging directory's name
  run.kind = RunKind::kToolkit;
  run.subject = toolkit.name();
  run.steps.push_back(Step{"toolkit",
                           {build.self.empty() ? std::string("fabuild") : build.self, "toolkit", "install",
                            toolkit.cuda.str(), "--python", python.path, "--dir", toolkit.root.string()},
                           {},
                           {},
                           {}});
  run.demand = Demand{1, 2.0, 1, 1};  // pip and one small nvcc compile
  run.log_path = log_path(build, run.id);
  run.staging_dir = staging_dir(build, run.id);
  run.kill_grace = std::chrono::seconds(10);
  return run;
}

}  // namespace fabuild
