#include "app/host_build.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "app/cell_run.h"
#include "app/host_source.h"
#include "engine/forecast.h"
#include "matrix/command.h"
#include "provision/host.h"
#include "provision/python_env.h"
#include "source/archive.h"
#include "source/cache.h"
#include "util/text.h"
#include "wheel/layout.h"
#include "wheel/manifest.h"
#include "wheel/verify.h"
#include "wheel/wheelhouse.h"

extern char** environ;

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

CellOutcome settled(const PlannedCell& p, CellResult result, const std::string& step, const std::string& message) {
  CellOutcome out;
  out.id = p.id;
  out.result = result;
  out.step = step;
  out.message = message;
  out.status.code = result == CellResult::kFailed ? 1 : 0;
  return out;
}

// The one .whl a build left in `dist`, or "" and why not.
std::string only_wheel(const fs::path& dist, fs::path& wheel) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dist, ec)) {
    if (e.path().extension() == ".whl") found.push_back(e.path());
  }
  if (found.size() == 1) {
    wheel = found.front();
    return {};
  }
  return found.empty() ? "the build left no .whl in " + dist.string()
                       : fmt::format("the build left {} wheels in {}; expected one", found.size(), dist.string());
}

class Planner {
 public:
  Planner(const Plan& plan, bool force)
      : plan_(plan), force_(force), env_(environment()), probe_(runner_, load_host_toolchains("toolchains/host.yaml"), env_),
        sources_(plan) {}

  HostBuild run(const std::vector<std::size_t>& which) {
    for (std::size_t i : which) add(i);
    return std::move(out_);
  }

 private:
  void add(std::size_t index) {
    const PlannedCell& p = plan_.cells[index];
    const Cell& cell = p.cell;
    const auto fail = [&](const std::string& step, const std::string& message) {
      out_.settled.push_back(settled(p, CellResult::kFailed, step, message));
      out_.settled_index.push_back(index);
    };
    if (cell.provision != Provision::kHost) {
      return fail("provision", "container provisioning is not available yet; build this cell with provision: host");
    }
    if (const auto up_to_date = filed_and_intact(p)) {
      out_.settled.push_back(*up_to_date);
      out_.settled_index.push_back(index);
      return;
    }
    std::vector<Probe> tried;
    const auto toolkit = find_toolkit(cell.cuda.toolkit, tried);
    if (!toolkit) return fail("toolkit", HostProbe::missing_toolkit(cell.cuda.toolkit, tried));
    tried.clear();
    const auto python = find_python(cell.python, tried);
    if (!python) return fail("python", HostProbe::missing_python(cell.python, tried));
    std::string source_error;
    const auto source = sources_.tree_for(cell, source_error);
    if (!source) return fail("source", source_error);

    const PythonEnv env = plan_python_env(cell, *python, torch_of(python->path), venv_root(), plan_.torch_index);
    if (!env.setup.empty()) add_environment(env);
    out_.cells.push_back(cell_run(p, *toolkit, env, *source));
    out_.cell_index.push_back(index);
    out_.needs.push_back(env.setup.empty() ? "" : env.key);
  }

  std::optional<CellOutcome> filed_and_intact(const PlannedCell& p) {
    if (force_) return std::nullopt;
    const auto filed = find_filed(plan_.wheelhouse, p.id);
    if (!filed) return std::nullopt;
    const fs::path wheel = fs::path(plan_.wheelhouse) / filed->wheel;
    const FiledState state = check_filed(plan_.wheelhouse, *filed);
    if (state != FiledState::kIntact) {
      out_.notes.push_back(fmt::format("{}: building again: its filed wheel {} {}", p.id, wheel.string(),
                                       state == FiledState::kMissing ? "is gone" : "changed since it was filed"));
      return std::nullopt;
    }
    const WheelVerdict verdict = verify_wheel(wheel, expectation_for(p.cell, required_members(p.cell)));
    if (!verdict.ok()) {
      out_.notes.push_back(fmt::format("{}: building again: its filed wheel no longer verifies: {}", p.id,
                                       join(verdict.problems, "; ")));
      return std::nullopt;
    }
    CellOutcome out = settled(p, CellResult::kUpToDate, "", "");
    out.output_dir = wheel.parent_path().string();
    return out;
  }

  static std::vector<std::string> required_members(const Cell& cell) { return {cell.package->extension + "*.so"}; }

  std::optional<Toolkit> find_toolkit(const Version& cuda, std::vector<Probe>& tried) {
    const auto it = toolkits_.find(cuda);
    if (it != toolkits_.end()) {
      tried = it->second.second;
      return it->second.first;
    }
    auto found = probe_.find_toolkit(cuda, tried);
    toolkits_[cuda] = {found, tried};
    return found;
  }

  std::optional<Interpreter> find_python(const PythonTag& tag, std::vector<Probe>& tried) {
    const auto it = pythons_.find(tag.str());
    if (it != pythons_.end()) {
      tried = it->second.second;
      return it->second.first;
    }
    auto found = probe_.find_python(tag, tried);
    pythons_[tag.str()] = {found, tried};
    return found;
  }

  // The C++ compiler the build finds on PATH (torch's extension builder uses `c++` unless CXX
  // says otherwise), as its first --version line.
  const std::string& compiler_version() {
    if (!compiler_) {
      const std::string cxx = env_.count("CXX") ? env_["CXX"] : "c++";
      const CommandResult r = runner_.run({"/usr/bin/env", cxx, "--version"}, {"PATH=" + env_["PATH"]}, std::chrono::seconds(30));
      compiler_ = r.ok() ? split(r.output, '\n').front() : std::string("?");
    }
    return *compiler_;
  }

  const TorchProbe& torch_of(const std::string& python) {
    if (!torches_.count(python)) torches_[python] = probe_torch(runner_, python);
    return torches_[python];
  }

  std::string venv_root() const { return (cache_dir() / "venvs").string(); }
  std::string logs() const { return (fs::path(plan_.wheelhouse) / "logs").string(); }

  void add_environment(const PythonEnv& env) {
    for (const auto& e : out_.environments) {
      if (e.id == env.key) return;
    }
    CellRun run;
    run.id = env.key;
    for (std::size_t i = 0; i < env.setup.size(); ++i) {
      run.steps.push_back(Step{i == 0 ? "venv" : "pip", env.setup[i], {}, {}, {}});
    }
    run.steps.push_back(Step{"check", env.check, {}, {}, {}});
    const std::string venv = env.venv;
    run.steps.push_back(Step{"ready", {}, {}, {}, [venv](const CellRun&) {
                               mark_venv_ready(venv);
                               return std::string();
                             }});
    run.demand = Demand{1, 2.0, 1, 1};  // pip: a core and a little memory
    run.log_path = (fs::path(logs()) / ("env-" + env.key + ".log")).string();
    run.staging_dir = fs::absolute(fs::path(plan_.wheelhouse) / ".staging" / ("env-" + env.key)).string();
    run.output_dir = env.venv;
    run.kill_grace = std::chrono::seconds(10);
    out_.environments.push_back(std::move(run));
  }

  CellRun cell_run(const PlannedCell& p, const Toolkit& toolkit, const PythonEnv& env, const fs::path& source) {
    const Cell& cell = p.cell;
    CellRun run = base_cell_run(p, plan_.wheelhouse);
    run.env.emplace_back("CUDA_HOME", toolkit.cuda_home);
    run.env.emplace_back("PATH", fmt::format("{}/bin:{}:{}", toolkit.cuda_home, env.bin_dir, env_["PATH"]));

    const fs::path staging(run.staging_dir);
    const fs::path tree = staging / "src";
    const fs::path dist = staging / "dist";
    const fs::path smoke = staging / "smoke";
    auto started = std::make_shared<Clock::time_point>();
    auto wheel = std::make_shared<fs::path>();

    run.steps.push_back(Step{"check", env.check, {}, {}, {}});
    if (source.empty() && plan_.source.kind == SourceSpec::Kind::kGit) {
      add_git_clone(run, cell, staging, tree, started);
    } else if (source.empty()) {
      add_pip_fetch(run, cell, env, staging, tree, started);
    } else {
      run.steps.push_back(Step{"copy", {}, {}, {}, [=](const CellRun&) {
                                 *started = Clock::now();
                                 std::error_code ec;
                                 fs::copy(source, tree, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
                                 return ec ? fmt::format("cannot copy {} to {}: {}", source.string(), tree.string(),
                                                         ec.message())
                                           : std::string();
                               }});
    }
    std::vector<std::string> build = plan_.frontend == Frontend::kPipWheel
                                         ? std::vector<std::string>{env.python, "-m", "pip", "wheel", "--no-build-isolation",
                                                                    "--no-deps", "--disable-pip-version-check", "-w",
                                                                    dist.string(), "."}
                                         : std::vector<std::string>{env.python, "setup.py", "bdist_wheel", "--dist-dir",
                                                                    dist.string()};
    run.steps.push_back(Step{"build", build, tree.string(), {}, {}});
    const WheelExpectation expected = expectation_for(cell, required_members(cell));
    run.steps.push_back(Step{"verify", {}, {}, {}, [=](const CellRun&) {
                               if (std::string e = only_wheel(dist, *wheel); !e.empty()) return e;
                               const WheelVerdict v = verify_wheel(*wheel, expected);
                               if (v.ok()) return std::string();
                               return join(v.problems, "; ");
                             }});
    run.steps.push_back(Step{"unpack", {}, {}, {}, [=](const CellRun&) {
                               try {
                                 extract_archive(*wheel, smoke);
                               } catch (const std::exception& e) {
                                 return std::string("cannot unpack the wheel: ") + e.what();
                               }
                               return std::string();
                             }});
    const std::string import = fmt::format(
        "import sys; sys.path.insert(0, sys.argv[1]); import torch; import {0}; print('fabuild: imported', {0}.__file__)",
        cell.package->extension);
    run.steps.push_back(Step{"import", {env.python, "-c", import, smoke.string()}, smoke.string(), {}, {}});
    const fs::path wheelhouse(plan_.wheelhouse);
    const std::string output_dir = run.output_dir;
    const std::string id = p.id;
    std::map<std::string, std::string> versions = {
        {"nvcc", toolkit.version.str()}, {"python", cell.python.dotted()}, {"compiler", compiler_version()}};
    const std::string python_exe = env.python;
    run.steps.push_back(Step{"file", {}, {}, {}, [=](const CellRun&) {
                               try {
                                 const FiledFile f = file_wheel(*wheel, output_dir);
                                 FiledWheel entry;
                                 entry.wheel = fs::relative(f.path, wheelhouse).generic_string();
                                 entry.sha256 = f.sha256;
                                 entry.size = f.size;
                                 entry.build_seconds =
                                     std::chrono::duration<double>(Clock::now() - *started).count();
                                 entry.versions = versions;
                                 ProcessCommandRunner runner;  // the venv exists now: ask it which torch it has
                                 entry.versions["torch"] = probe_torch(runner, python_exe).torch_version.value_or("?");
                                 record_filed(wheelhouse, id, entry);
                               } catch (const std::exception& e) {
                                 return std::string(e.what());
                               }
                               return std::string();
                             }});
    return run;
  }

  // `source: pip`: the sdist through pip's configured index (PyPI's carries cutlass), fetched
  // by the cell's own Python with the package's build skipped while pip reads its metadata.
  static void add_pip_fetch(CellRun& run, const Cell& cell, const PythonEnv& env, const fs::path& staging,
                            const fs::path& tree, const std::shared_ptr<Clock::time_point>& started) {
    const fs::path sdist = staging / "sdist";
    run.steps.push_back(Step{"fetch",
                             {env.python, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                              "--no-build-isolation", "--disable-pip-version-check", "-d", sdist.string(),
                              fmt::format("{}=={}", cell.package->name, cell.version.str())},
                             staging.string(),
                             // pip checks the metadata's version against the requirement: no label here.
                             {{"FLASH_ATTENTION_SKIP_CUDA_BUILD", "TRUE"}, {cell.package->local_version_env, ""}},
                             {}});
    run.steps.push_back(Step{"unpack-source", {}, {}, {}, [=](const CellRun&) {
                               *started = Clock::now();
                               std::vector<fs::path> archives;
                               std::error_code ec;
                               for (const auto& e : fs::directory_iterator(sdist, ec)) archives.push_back(e.path());
                               if (archives.size() != 1) {
                                 return fmt::format("pip left {} files in {}; expected one sdist", archives.size(),
                                                    sdist.string());
                               }
                               try {
                                 const fs::path unpacked = staging / "sdist-tree";
                                 extract_archive(archives.front(), unpacked);
                                 fs::rename(sdist_root(unpacked), tree);
                               } catch (const std::exception& e) {
                                 return std::string(e.what());
                               }
                               return std::string();
                             }});
  }

  // `source: {git: URL, ref: TAG}`: a recursive clone at the tag (GitHub's tag archives lack
  // FlashAttention's cutlass submodule; a recursive clone has it).
  void add_git_clone(CellRun& run, const Cell& cell, const fs::path& staging, const fs::path& tree,
                     const std::shared_ptr<Clock::time_point>& started) const {
    const std::string ref = expand_placeholders(plan_.source.ref, {{"version", cell.version.str()}});
    std::string url = plan_.source.location;
    if (url.find("://") == std::string::npos && !fs::path(url).is_absolute()) {
      url = (fs::path(plan_.matrix_dir) / url).string();  // a local repository, relative to the matrix
    }
    run.steps.push_back(Step{"prepare", {}, {}, {}, [started](const CellRun&) {
                               *started = Clock::now();
                               return std::string();
                             }});
    run.steps.push_back(Step{"clone",
                             {"git", "clone", "--quiet", "--recursive", "--depth", "1", "--shallow-submodules",
                              "--branch", ref, url, tree.string()},
                             staging.string(),
                             {},
                             {}});
  }

  const Plan& plan_;
  bool force_;
  std::map<std::string, std::string> env_;
  ProcessCommandRunner runner_;
  HostProbe probe_;
  HostSources sources_;
  std::map<Version, std::pair<std::optional<Toolkit>, std::vector<Probe>>> toolkits_;
  std::map<std::string, std::pair<std::optional<Interpreter>, std::vector<Probe>>> pythons_;
  std::map<std::string, TorchProbe> torches_;
  std::optional<std::string> compiler_;
  HostBuild out_;
};

}  // namespace

HostBuild plan_host_build(const Plan& plan, const std::vector<std::size_t>& which, bool force) {
  return Planner(plan, force).run(which);
}

}  // namespace fabuild
