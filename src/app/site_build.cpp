#include "app/site_build.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "app/cell_run.h"
#include "app/container_site.h"
#include "app/filed_check.h"
#include "app/host_sites.h"
#include "app/host_source.h"
#include "app/library_steps.h"
#include "app/object_cache.h"
#include "app/preparation.h"
#include "app/source_epoch.h"
#include "app/sweep_steps.h"
#include "app/verified_stamps.h"
#include "app/wheel_cell_run.h"
#include "costs/job_setup.h"
#include "engine/cell_env.h"
#include "provision/python_env.h"
#include "provision/toolkit_choice.h"
#include "util/text.h"
#include "wheel/manifest.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

class Planner {
 public:
  Planner(const Plan& plan, bool force, const System& system)
      : plan_(plan),
        force_(force),
        system_(system),
        env_(system.env),
        runner_(*system.commands),
        host_(plan, env_, runner_, *system.files, system.platform == to_string(Platform::kWinAmd64)),
        sources_(plan, *system.files),
        epochs_(*system.commands, *system.files, system.env.value("PATH")) {}

  SiteBuild run(const std::vector<std::size_t>& which) {
    if (plan_.cache.enabled && !which.empty()) {
      if (auto wrapper = install_cc_wrapper(*system_.files, plan_.cache_root)) {
        wrapper_ = *wrapper;
        out_.object_cache = true;
        remote_ = open_run_remote(plan_.remote_cache, system_, out_.notes);
      } else {
        out_.notes.push_back("building without the object cache: " + wrapper.error().what);
      }
    }
    for (std::size_t i : which) add(i);
    for (EntryUse& use : sources_.take_uses()) out_.uses.push_back(std::move(use));
    if (const auto saved = stamps_.save(); !saved)
      out_.notes.push_back(saved.error().what + " (" + saved.error().hint + ")");
    if (containers_) out_.notes.insert(out_.notes.begin(), containers_->notes().begin(), containers_->notes().end());
    return std::move(out_);
  }

 private:
  void add(std::size_t index) {
    if (plan_.verify_only) return add_verify(index);
    const PlannedCell& p = plan_.cells[index];
    const Cell& cell = p.cell;
    const auto fail = [&](const std::string& step, const std::string& message) { fail_cell(index, step, message); };
    const auto filed = [&] {
      return cell.library() ? library_filed_and_intact(p, plan_.wheelhouse, manifest_, out_.notes)
                            : filed_and_intact(p, plan_.wheelhouse, manifest_, stamps_, out_.notes);
    };
    // A compile share files no wheel: a filed one does not make it up to date.
    if (const auto up_to_date = force_ || plan_.compile_share ? std::nullopt : filed()) {
      if (add_reverify(index)) return;
      out_.settled.push_back(*up_to_date);
      out_.settled_index.push_back(index);
      return;
    }
    // Its compilers, torch and the object cache's wrapper are this machine's: no cross builds.
    if (to_string(cell.platform) != system_.platform) {
      return fail("site", fmt::format("the cell is for {}, and this machine builds {}: build it on a {} machine "
                                      "(ci.runners: {{{}: <runner label>}} in the matrix for CI) or leave it out "
                                      "(--platform {})",
                                      to_string(cell.platform), system_.platform, to_string(cell.platform),
                                      to_string(cell.platform), system_.platform));
    }
    if (cell.library()) return add_library(index);
    if (plan_.compile_share && (!wrapper_ || !remote_ || cell.rocm())) {
      return fail("share", fmt::format("a compile share compiles through the object cache into the remote, and {}: "
                                       "see the notes above",
                                       !wrapper_  ? "the object cache is not available"
                                       : !remote_ ? "the remote cache could not be opened"
                                                  : "ROCm cells compile without the cache"));
    }
    const SiteResult site = cell.provision == Provision::kHost ? host_.site_for(cell) : containers().site_for(p);
    if (!site) return fail(site.error().step, site.error().message());
    const Expected<fs::path> source = sources_.tree_for(cell);
    if (!source) return fail("source", source.error().what);

    const EnvTool* tool = site->container ? &kPipOnly : env_tool(site->python);
    if (tool == nullptr) {
      return fail("environment",
                  fmt::format("python_env: uv, but there is no uv on PATH ({}); install it (`pip install "
                              "uv`, or uv's installer) or set python_env: pip",
                              env_.value("PATH")));
    }
    const PythonEnv env =
        plan_python_env(cell, site->python, torch_of(*site), site->venv_root, plan_.torch_index, *tool);
    if (!env.venv.empty()) {  // a container's environments are one entry: their root
      const fs::path used = site->container ? fs::path(site->venv_root) : fs::path(env.venv);
      hold(used);
      system_.files->touch(used);  // marked used: a mark that fails only makes it look older to a trim
    }
    std::vector<std::size_t> needs;
    if (!env.setup.empty()) needs.push_back(add_environment(env, *site));
    const ToolkitChoice* choice =
        cell.provision == Provision::kHost && !cell.rocm() ? &host_.toolkit_for(cell) : nullptr;
    if (choice != nullptr && choice->install) {
      hold(choice->install->dir());
      needs.push_back(add_toolkit_install(*choice->install, site->python));
    }
    const std::vector<SweepTorch> sweep = sweep_environments(p, *site, *tool, needs);
    out_.cells.push_back(cell_run(p, *site, env, *source, choice, sweep));
    out_.cells.back().disk_need = disk_need(*source);
    out_.cell_index.push_back(index);
    out_.needs.push_back(std::move(needs));
  }

  // What a cell needs free where it stages (CellRun::disk_need), estimated: its source copied,
  // objects and a wheel about as large again, and a gigabyte for the build's own files. A
  // source fetched by the cell itself (git, pip) counts as nothing until it is there.
  std::uint64_t disk_need(const fs::path& source) {
    const auto [it, added] = tree_bytes_.try_emplace(source.string(), 0);
    if (added && !source.empty()) it->second = bytes_under(source);
    return (std::uint64_t{1} << 30) + 2 * it->second;
  }

  // Holds a cache entry that the run uses until it ends (util/entry_lock.h): no trim of another
  // fabuild removes it meanwhile.
  void hold(const fs::path& entry) {
    if (!held_.insert(entry.string()).second) return;
    if (auto use = EntryUse::take(entry)) out_.uses.push_back(std::move(*use));
  }

  void fail_cell(std::size_t index, const std::string& step, const std::string& message) {
    out_.settled.push_back(settled(plan_.cells[index], CellResult::kFailed, step, message));
    out_.settled_index.push_back(index);
  }

  // The environments a stable-ABI cell's wheel is checked in, one per torch release of its
  // sweep (plan.sweeps), each made before the cell as its build's is; `needs` gains them.
  std::vector<SweepTorch> sweep_environments(const PlannedCell& p, const Site& site, const EnvTool& tool,
                                             std::vector<std::size_t>& needs,
                                             const std::vector<std::string>& only = {}) {
    std::vector<SweepTorch> out;
    const auto it = plan_.sweeps.find(p.id);
    if (it == plan_.sweeps.end()) return out;
    for (const TorchRelease& release : it->second) {
      const std::string series = release.version.series();
      if (!only.empty() && std::find(only.begin(), only.end(), series) == only.end()) continue;
      Cell under = p.cell;  // the same ABI, with that torch, its CUDA build and a Python it has
      under.torch = release.version.series_version();
      under.torch_cuda = release.cuda;
      const bool other_python = release.python.minor != 0 && release.python != p.cell.python;
      SiteResult other;
      if (other_python) {
        under.python = release.python;
        other = site.container ? containers().site_for(PlannedCell{p.cells, under, p.patches, p.id, p.jobs, p.row})
                               : host_.python_site(under);
        if (!other) {
          out_.notes.push_back(fmt::format("{}: not checked under torch {}: it has no {} wheel, and {}", p.id,
                                           release.version.str(), p.cell.python.str(), other.error().message()));
          continue;
        }
      }
      const Site& where = other_python ? *other : site;
      const PythonEnv env =
          plan_python_env(under, where.python, torch_of(where), where.venv_root, plan_.torch_index, tool);
      if (!env.venv.empty() && !where.container) {
        hold(env.venv);
        system_.files->touch(env.venv);
      }
      if (!env.setup.empty()) needs.push_back(add_environment(env, where));
      out.push_back({under.torch.str(), env.python});
    }
    return out;
  }

  // A filed stable-ABI wheel whose proofs lack a torch release of the plan's sweep (one the index
  // has published since): checked under those releases, no compile. False when there is none to
  // check, or the cell builds in a container (`fabuild verify` checks those wheels).
  bool add_reverify(std::size_t index) {
    const PlannedCell& p = plan_.cells[index];
    const auto sweep = plan_.sweeps.find(p.id);
    const auto filed = manifest_.find(p.id);
    if (sweep == plan_.sweeps.end() || filed == manifest_.end() || p.cell.provision != Provision::kHost) return false;
    std::vector<std::string> series;
    for (const TorchRelease& t : sweep->second) series.push_back(t.version.series());
    return add_checks(index, filed->second, unproven(filed->second, series)) == Added::kYes;
  }

  // --verify-torch: the cell's filed wheel checked under the plan's releases, whatever its proofs
  // say; a cell with no intact filed wheel fails (nothing is built).
  void add_verify(std::size_t index) {
    const PlannedCell& p = plan_.cells[index];
    const auto filed = manifest_.find(p.id);
    const bool intact = filed != manifest_.end() &&
                        (p.cell.library() ? library_filed_and_intact(p, plan_.wheelhouse, manifest_, out_.notes)
                                          : filed_and_intact(p, plan_.wheelhouse, manifest_, stamps_, out_.notes));
    if (!intact) {
      return fail_cell(index, "verify",
                       fmt::format("no intact filed wheel in {} to check: build it first (fabuild {})",
                                   plan_.wheelhouse, plan_.matrix_file));
    }
    const auto sweep = plan_.sweeps.find(p.id);
    std::vector<std::string> series;
    if (sweep != plan_.sweeps.end()) {
      for (const TorchRelease& t : sweep->second) series.push_back(t.version.series());
    }
    if (add_checks(index, filed->second, series) == Added::kNothing) {
      out_.settled.push_back(*filed_and_intact(p, plan_.wheelhouse, manifest_, stamps_, out_.notes));
      out_.settled_index.push_back(index);
    }
  }

  enum class Added { kYes, kNothing, kFailed };
  // The run that checks `filed` under `series` (no compile), on this host's interpreter.
  Added add_checks(std::size_t index, const FiledWheel& filed, const std::vector<std::string>& missing) {
    const PlannedCell& p = plan_.cells[index];
    if (missing.empty()) return Added::kNothing;
    const SiteResult site = host_.python_site(p.cell);
    if (!site) {
      fail_cell(index, site.error().step, site.error().message());
      return Added::kFailed;
    }
    const EnvTool* tool = env_tool(site->python);
    if (tool == nullptr) {
      fail_cell(index, "environment", "python_env: uv, but there is no uv on PATH");
      return Added::kFailed;
    }
    std::vector<std::size_t> needs;
    const std::vector<SweepTorch> torches = sweep_environments(p, *site, *tool, needs, missing);
    CellRun run = base_cell_run(p, plan_.wheelhouse);
    run.demand = Demand{1, 3.0, 1, 1};  // a torch import at a time: a core and a little memory
    add_reverify_steps(run, plan_.wheelhouse, p.id, filed, torches, p.cell.package->extension, p.cell.torch.series());
    out_.notes.push_back(
        fmt::format("{} is filed; checking it under torch {} (no compile)", p.id, join(missing, ", ")));
    out_.cells.push_back(std::move(run));
    out_.cell_index.push_back(index);
    out_.needs.push_back(std::move(needs));
    return Added::kYes;
  }

  // A library cell: this host's toolkit (as a wheel cell's), CMake and Ninja; no Python.
  void add_library(std::size_t index) {
    const PlannedCell& p = plan_.cells[index];
    const ToolkitChoice& choice = host_.toolkit_for(p.cell);
    if (!choice.toolkit) return fail_cell(index, "toolkit", choice.toolkit.error().what);
    if (!library_tools_) library_tools_ = find_library_tools(env_, runner_, *system_.files, plan_.cache_root);
    if (!*library_tools_) {
      return fail_cell(index, "site", library_tools_->error().what + "; " + library_tools_->error().hint);
    }
    const Expected<fs::path> source = sources_.tree_for(p.cell);
    if (!source) return fail_cell(index, "source", source.error().what);
    std::vector<std::size_t> needs;
    if (choice.install) {  // `fabuild toolkit install` runs pip: any python3 does
      hold(choice.install->dir());
      const std::string python = env_.find_program("python3");
      if (python.empty())
        return fail_cell(index, "toolkit", "installing a CUDA toolkit from PyPI needs python3 on PATH");
      needs.push_back(add_toolkit_install(*choice.install, Interpreter{python, {}}));
    }
    LibraryBuild b = host_library_build(plan_, p, *source, **library_tools_, choice, env_.value("PATH"));
    b.versions["compiler"] = host_.compiler_version();
    b.files = system_.files;
    b.clock = system_.steady_now;
    if (wrapper_) {
      b.cache = &plan_.cache;
      b.wrapper = &*wrapper_;
    }
    LibraryRun made = library_cell_run(b);
    if (made.compiles) out_.compiles[p.id] = made.compiles;
    out_.cells.push_back(std::move(made.run));
    out_.cells.back().disk_need = disk_need(*source);
    out_.cell_index.push_back(index);
    out_.needs.push_back(std::move(needs));
  }

  ContainerSites& containers() {
    if (!containers_) {
      containers_ = std::make_unique<ContainerSites>(plan_, system_.commands, host_.probe(),
                                                     inherited_env(env_).entries(), *system_.files);
    }
    return *containers_;
  }

  // What makes this run's host environments (python_env:): uv when it is asked for or on PATH,
  // with pip's configured indexes, else venv and pip. nullptr when uv is asked for and missing.
  const EnvTool* env_tool(const Interpreter& python) {
    if (!env_tool_) env_tool_ = find_env_tool(plan_.python_env == PythonEnvTool::kPip, env_, runner_, python.path);
    if (plan_.python_env == PythonEnvTool::kUv && env_tool_->uv.empty()) return nullptr;
    return &*env_tool_;
  }

  const TorchProbe& torch_of(const Site& site) {
    const std::string key = site.torch_key + "|" + site.python.path;
    if (!torches_.count(key)) torches_[key] = probe_torch(*site.runner, site.python.path);
    return torches_[key];
  }

  // Where a host cell's torch check keeps its stamps. A container cell checks every time: its
  // interpreter lives in the image, and nothing of this machine's cache is writable there.
  std::string check_stamps(const Site& site) const {
    return site.container ? std::string() : (plan_.cache_root / "torch-checks").string();
  }

  // The run that makes `env`, added once; returns its id.
  std::size_t add_environment(const PythonEnv& env, const Site& site) {
    const std::string id =
        site.container ? fmt::format("{}-{}", env.key, fs::path(site.venv_root).filename().string()) : env.key;
    for (std::size_t k = 0; k < out_.environments.size(); ++k) {
      if (out_.environments[k].id == id) return k;
    }
    out_.environments.push_back(environment_run(id, env, site, preparing()));
    return out_.environments.size() - 1;
  }

  // The run that installs a CUDA toolkit from PyPI, added once; returns its id.
  std::size_t add_toolkit_install(const PipToolkit& toolkit, const Interpreter& python) {
    CellRun run = toolkit_install_run(toolkit, python, preparing());
    for (std::size_t k = 0; k < out_.environments.size(); ++k) {
      if (out_.environments[k].kind == RunKind::kToolkit && out_.environments[k].subject == run.subject) return k;
    }
    out_.environments.push_back(std::move(run));
    return out_.environments.size() - 1;
  }

  Preparing preparing() const {
    return Preparing{plan_.wheelhouse,   plan_.matrix_file, (plan_.cache_root / "torch-checks").string(),
                     plan_.torch_index,  system_.self,      system_.files,
                     system_.kill_tagged};
  }

  CellRun cell_run(const PlannedCell& p, const Site& site, const PythonEnv& env, const fs::path& source,
                   const ToolkitChoice* choice, const std::vector<SweepTorch>& sweep) {
    const WheelRunContext context{
        plan_,          system_, wrapper_ ? &*wrapper_ : nullptr, remote_, trust_, job_setups_, check_stamps(site),
        self_identity()};
    WheelRun made = wheel_cell_run(context, WheelCell{p, site, env, source, choice, sweep}, epochs_);
    if (made.compiles) out_.compiles[p.id] = made.compiles;
    return std::move(made.run);
  }

  // fabuild's version and the SHA-256 of its executable, for the build records; read once.
  const FabuildIdentity& self_identity() {
    if (!self_) self_ = fabuild_identity(system_.self);
    return *self_;
  }

  const Plan& plan_;
  std::optional<FabuildIdentity> self_;
  std::shared_ptr<const remote::IndexTrust> trust_ =
      std::make_shared<const remote::IndexTrust>(plan_.remote_cache.trust);
  bool force_;
  const System& system_;
  const Environment& env_;
  CommandRunner& runner_;
  HostSites host_;
  HostSources sources_;
  SourceEpochs epochs_;
  std::optional<EnvTool> env_tool_;
  static inline const EnvTool kPipOnly{};  // container cells: the image's pip
  std::map<std::string, TorchProbe> torches_;
  std::map<std::string, std::uint64_t> tree_bytes_;  // by source tree
  std::unique_ptr<ContainerSites> containers_;
  std::optional<CcWrapper> wrapper_;                     // set when the object cache is on
  std::optional<Expected<LibraryTools>> library_tools_;  // found at the first library cell
  std::shared_ptr<remote::Store> remote_;                // the object cache's remote tier, when one is set
  // Each row's setup in this CI job, for its record (none outside CI).
  std::shared_ptr<JobSetups> job_setups_ = std::make_shared<JobSetups>(system_.job_elapsed_s);
  VerifiedStamps stamps_{*system_.files, plan_.wheelhouse};
  // What is filed, read once for every cell; not read when nothing filed counts (--force, a share).
  const std::map<std::string, FiledWheel> manifest_ =
      force_ || plan_.compile_share ? std::map<std::string, FiledWheel>() : manifest_entries(plan_.wheelhouse);
  std::set<std::string> held_;  // the entries of out_.uses
  SiteBuild out_;
};

}  // namespace

SiteBuild plan_site_build(const Plan& plan, const std::vector<std::size_t>& which, bool force, const System& system) {
  return Planner(plan, force, system).run(which);
}

}  // namespace fabuild
