#include "app/wheel_cell_run.h"

#include <algorithm>
#include <optional>

#include "app/cell_run.h"
#include "app/compile_steps.h"
#include "app/container_site.h"
#include "app/exports_step.h"
#include "app/filed_check.h"
#include "app/gpu_code_step.h"
#include "app/probation_steps.h"
#include "app/remote_cache.h"
#include "app/source_steps.h"
#include "app/wheel_steps.h"
#include "costs/row_costs.h"
#include "objcache/protocol.h"
#include "util/environment.h"
#include "wheel/verify.h"

namespace fabuild {

namespace fs = std::filesystem;

WheelRun wheel_cell_run(const WheelRunContext& c, const WheelCell& w, SourceEpochs& epochs) {
  const PlannedCell& p = w.p;
  const Site& site = w.site;
  const PythonEnv& env = w.env;
  const fs::path& source = w.source;
  const ToolkitChoice* choice = w.choice;
  const std::vector<SweepTorch>& sweep = w.sweep;
  WheelRun made;
  const Cell& cell = p.cell;
  const Toolkit& toolkit = site.toolkit;
  CellRun run = base_cell_run(p, c.plan.wheelhouse);
  if (cell.rocm()) {  // torch's extension builder finds ROCm through ROCM_HOME (hipcc under bin/)
    run.env.emplace_back("ROCM_HOME", toolkit.home);
    run.env.emplace_back("ROCM_PATH", toolkit.home);
  } else {
    run.env.emplace_back("CUDA_HOME", toolkit.home);
  }
  run.env.insert(run.env.begin(), site.env.begin(), site.env.end());  // the matrix's env: comes after
  const std::string sep(1, site.path_separator);
  run.env.emplace_back("PATH", (fs::path(toolkit.home) / "bin").string() + sep + env.bin_dir + sep + site.path_tail);
  std::vector<Mount> mounts;  // what a container cell sees of this machine besides its staging directory
  if (!env.venv.empty()) mounts.push_back(Mount{env.venv, env.venv, true});
  // The object cache knows nvcc and the C++ compiler, not hipcc: ROCm cells compile without it.
  const bool cached = (c.wrapper != nullptr) && !cell.rocm();
  // A container mounts the object cache: it must be there first (the engine would make it root's).
  if (cached && site.container) (void)c.system.files->create_directories(c.plan.cache.dir);
  const std::shared_ptr<CellCompiles> compiles =
      cached ? use_object_cache(run, c.plan.cache, *c.wrapper, toolkit.home, env.venv,
                                site.container ? &mounts : nullptr, c.system.files)
             : nullptr;
  made.compiles = compiles;
  const auto findings =
      std::make_shared<CellFindings>(c.system.steady_now);  // what its in-process steps find, for the next

  const fs::path staging(run.staging_dir);
  const fs::path tree = staging / "src";
  const fs::path dist = staging / "dist";

  // The check also reports torch's version, for the manifest (a torch import fewer when filing).
  Step check{"check", torch_check_argv(env, "-", c.check_stamps), {}, {}, {}};
  check.reports_facts = true;
  run.steps.push_back(std::move(check));
  // The wheel's zip times from the source (app/source_epoch.h), unless the caller set them.
  const bool epoch_from_source = !c.system.env.has(kSourceDateEpoch);
  if (epoch_from_source && !source.empty()) {
    run.env.emplace_back(kSourceDateEpoch, std::to_string(epochs.of(source).seconds));
  }
  add_source_steps(run,
                   SourceSteps{&p, &c.plan.source_of(cell), c.plan.matrix_dir, &env, source, staging, tree,
                               site.container.has_value(), findings, c.system.files, epoch_from_source},
                   mounts);
  run.steps.push_back(modes_step(tree, c.system.files));
  // The package's setup.py may sit below the root of its source (FlashAttention 3: hopper/).
  const fs::path build_dir = cell.package->source_subdir.empty() ? tree : tree / cell.package->source_subdir;
  if (auto facts = source_facts_step(cell, build_dir, c.system.files)) run.steps.push_back(std::move(*facts));
  const std::string row_key = remote_row_key(cell);
  const std::optional<Shard> share = c.plan.compile_share;
  CompileUnits units{compiles,
                     tree,
                     build_dir,
                     c.remote,
                     c.plan.cache.dir,
                     row_costs_path(c.plan.cache_root, row_key),
                     row_key,
                     share ? share_writer(share->index) : remote_writer(cell),
                     share,
                     (staging / ".compile-share").string(),
                     cached ? (staging / ".build-sources.json").string() : "",
                     c.plan.share_costs,
                     c.system.files,
                     run.memory_gate && cached ? (staging / objcache::kPeaksFile).string() : "",
                     run.nvcc_threads,
                     c.job_setups,
                     c.plan.remote_cache.write,
                     c.trust,
                     c.system.steady_now,
                     false,
                     nullptr,
                     ""};
  const std::vector<std::string>& off = cell.disabled();
  units.backward_off = std::find(off.begin(), off.end(), "BACKWARD") != off.end();
  if (const auto b = c.plan.borrowed.find(row_key); b != c.plan.borrowed.end()) {
    units.borrowed = std::make_shared<const RowCosts>(b->second.record);
    units.borrowed_from = b->second.torch.str();
  }
  std::shared_ptr<CompileFollower> follower = cached ? follow_compiles(run, units) : nullptr;
  if (cached && c.remote) {
    run.steps.push_back(remote_fetch_step(c.remote, c.plan.cache.dir, row_key, c.plan.remote_cache.fetch_budget,
                                          c.system.files, share ? units.writer : "", c.trust));
  }
  if (cached) {
    // What the build compiles, from its setup.py (seconds: torch's import): units, ETA, shares.
    run.steps.push_back(
        Step{"sources", build_sources_argv(env.python, units.sources_file), build_dir.string(), {}, {}});
    run.steps.push_back(units_step(units, follower));
  }
  std::vector<std::string> build_argv = wheel_build_argv(c.plan.frontend, env.python, dist);
  if (cell.platform != Platform::kWinAmd64) build_argv = with_fixed_umask(std::move(build_argv));  // none there
  Step compile{"build", std::move(build_argv), build_dir.string(), {}, {}};
  if (share) compile.env.emplace_back(objcache::wrapper_env::kShare, units.share_file);
  if (!units.peaks_file.empty()) {  // wrapper_env::kMemoryMb comes from the runner, with MAX_JOBS
    compile.env.emplace_back(objcache::wrapper_env::kGate, (staging / objcache::kGateDir).string());
    compile.env.emplace_back(objcache::wrapper_env::kPeaks, units.peaks_file);
  }
  compile.releases_share = true;
  run.steps.push_back(std::move(compile));
  if (cached) run.steps.push_back(costs_step(units, follower));
  if (cached && c.remote && c.plan.remote_cache.write) {
    run.steps.push_back(remote_push_step(c.remote, c.plan.cache.dir, row_key, units.writer, compiles,
                                         c.plan.remote_cache.push_budget, c.system.files, c.trust));
  } else if (cached && c.remote) {
    run.steps.push_back(remote_kept_step(compiles));
  }
  if (share) {  // its wheel is made of placeholders for the other shares' units: never checked or filed
    run.steps.push_back(share_step(units, follower));
    run.output_dir.clear();
    if (site.container) run_in_container(run, *site.container, std::move(mounts), c.system.files);
    made.run = std::move(run);
    return made;
  }
  WheelChecks checks{dist, staging / "smoke", expectation_for(cell, required_members(cell)), env.python,
                     cell.package->extension};
  add_wheel_checks(run, checks, findings, c.system.files);
  add_gpu_code_steps(run, cell, env.python, checks.smoke, (fs::path(toolkit.home) / "bin" / "cuobjdump").string(),
                     findings);
  if (!cell.package->exports.empty())
    run.steps.push_back(exports_step(cell, checks.smoke, build_dir, findings, c.system.files));
  add_sweep_steps(run, sweep, checks.smoke, cell.package->extension);
  if (cached)
    add_probation(run, ProbationScope{c.plan.cache.dir, row_key, compiles, c.system.files, run.log_path},
                  {build_dir / "build", dist, checks.smoke});
  WheelFiling filing = wheel_filing(p, site, choice, c.plan.wheelhouse, compiles);
  const std::optional<SourceEpoch> epoch = source.empty() ? std::nullopt : std::optional(epochs.of(source));
  filing.build = planned_build_record(c.plan, p, c.plan.source_of(cell), epoch, c.system.env.get(kSourceDateEpoch),
                                      c.system.env, c.self);
  run.steps.push_back(file_step(filing, checks, findings, c.system.files));
  if (!sweep.empty()) {
    std::vector<std::string> series;
    for (const SweepTorch& t : sweep) series.push_back(t.series);
    run.steps.push_back(proofs_step(series, cell.torch.series()));
  }
  if (site.container) run_in_container(run, *site.container, std::move(mounts), c.system.files);
  made.run = std::move(run);
  return made;
}

}  // namespace fabuild
