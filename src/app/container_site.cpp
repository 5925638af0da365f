#include "app/container_site.h"

#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "provision/python_env.h"
#include "source/cache.h"
#include "util/host_info.h"
#include "util/processes.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kQuestionTimeout{120000};

std::string short_id(const std::string& id) {
  const std::string hex = id.rfind("sha256:", 0) == 0 ? id.substr(7) : id;
  return hex.substr(0, 12);
}

std::string describe(const std::vector<Probe>& tried) {
  std::vector<std::string> parts;
  for (const auto& p : tried) parts.push_back(p.candidate + ": " + p.outcome);
  return join(parts, "; ");
}

}  // namespace

ContainerSites::ContainerSites(const Plan& plan, std::shared_ptr<CommandRunner> runner, HostProbe& host,
                               std::vector<std::string> engine_env, Files& files)
    : plan_(plan),
      runner_(runner),
      host_(host),
      engine_env_(std::move(engine_env)),
      files_(files),
      run_id_(new_run_id()) {}

ContainerSites::~ContainerSites() = default;

CommandRunner& ContainerSites::probe_runner(const Image& image, const std::vector<Mount>& mounts) {
  std::string key = image.id;
  for (const auto& m : mounts) key += "|" + m.source;
  auto& r = runners_[key];
  if (!r) r = std::make_unique<ContainerCommandRunner>(*runner_, **engine_, image.id, mounts, engine_env_);
  return *r;
}

Expected<const ContainerEngine*> ContainerSites::engine() {
  if (!engine_) {
    engine_ = find_container_engine(*runner_, plan_.container.engine, engine_env_);
    if (*engine_) {
      const auto removed = remove_orphan_containers(*runner_, **engine_, engine_env_, host_label());
      if (!removed.empty()) {
        notes_.push_back(fmt::format("removed {} container{} left by a fabuild that was killed: {}", removed.size(),
                                     removed.size() == 1 ? "" : "s", join(removed)));
      }
    }
  }
  if (!*engine_) {
    const Failure& f = engine_->error();
    return no_site("engine", f.what, f.hint);
  }
  return &**engine_;
}

const Expected<Image>& ContainerSites::image_for(const Cell& cell, const ToolchainPlan& toolchain,
                                                 const ContainerEngine& engine) {
  const std::string arch = image_architecture(cell.platform);
  const std::string candidates = arch + " " + join(toolchain.images, " ");
  if (const auto it = images_.find(candidates); it != images_.end()) return it->second;
  Probed<Image> resolved = resolve_image(*runner_, engine, toolchain.images, plan_.container.pull, engine_env_, arch);
  const std::vector<Probe>& tried = resolved.tried;
  if (auto& found = resolved.found) {
    std::string note = fmt::format("CUDA {}: image {} ({})", cell.cuda.toolkit.str(), found->name, short_id(found->id));
    if (tried.size() > 1) note += fmt::format(", after {}", describe({tried.begin(), tried.end() - 1}));
    notes_.push_back(note);
    return images_.emplace(candidates, std::move(*found)).first->second;
  }
  return images_
      .emplace(candidates,
               no_site("image", fmt::format("no {} image for CUDA {} (tried {}); build one (docker/README.md) or name "
                                            "one under container: {{images: {{{}: {{\"{}\": [...]}}}}}}",
                                            arch, cell.cuda.toolkit.str(), describe(tried), to_string(cell.platform),
                                            cell.cuda.toolkit.str())))
      .first->second;
}

const Expected<std::string>& ContainerSites::asked(const std::string& key,
                                                   const std::function<Expected<std::string>()>& ask) {
  if (const auto it = checks_.find(key); it != checks_.end()) return it->second;
  return checks_.emplace(key, ask()).first->second;
}

Expected<Toolkit> ContainerSites::toolkit_in(const Image& image, CommandRunner& probe, const Cell& cell,
                                             const std::string& cuda_home) {
  const bool rocm = cell.rocm();
  const ContainerSpec& spec = plan_.container;
  // nvcc --version, or a ROCm installation's .info/version.
  const std::string nvcc =
      rocm ? (fs::path(cuda_home) / ".info" / "version").string() : (fs::path(cuda_home) / "bin" / "nvcc").string();
  const Expected<std::string>& tk = asked(image.id + "|nvcc|" + nvcc, [&]() -> Expected<std::string> {
    const CommandResult r = rocm ? probe.run({"cat", nvcc}, {"PATH=/usr/bin:/bin"}, kQuestionTimeout)
                                 : probe.run({nvcc, "--version"}, {"PATH=/usr/bin:/bin"}, kQuestionTimeout);
    const auto version = !r.ok() ? std::nullopt : rocm ? rocm_release_in(r.output) : nvcc_release_in(r.output);
    if (version) return version->str();
    return fail(
        fmt::format("{} in {}: {}", nvcc, image.name, r.ok() ? "no release number" : trim(r.output).substr(0, 200)));
  });
  const auto version = tk ? Version::parse(*tk) : std::nullopt;
  if (!version || version->major() != cell.cuda.toolkit.major() || version->minor() != cell.cuda.toolkit.minor()) {
    return no_site(
        "toolkit",
        fmt::format("the image has no {} {} toolkit at {} ({}); set container.cuda_home, use an image with it, or "
                    "mount this machine's with container: {{toolkit: host}}",
                    rocm ? "ROCm" : "CUDA", cell.cuda.toolkit.str(), cuda_home,
                    tk ? (rocm ? "ROCm " : "nvcc ") + *tk : tk.error().what));
  }
  // A pinned release (12.9.1) of an image's toolkit is checked as a host's is: nvcc says only
  // "release 12.9", version.json says the release, and the manifest records it.
  Version release = *version;
  if (!rocm && !spec.host_toolkit && cell.cuda.toolkit.release().size() > 2) {
    const std::string json = (fs::path(cuda_home) / "version.json").string();
    const Expected<std::string>& said = asked(image.id + "|release|" + json, [&]() -> Expected<std::string> {
      const CommandResult r = probe.run({"cat", json}, {"PATH=/usr/bin:/bin"}, kQuestionTimeout);
      const auto release = r.ok() ? cuda_release_in(r.output) : std::nullopt;
      if (release) return release->str();
      return fail(r.ok() ? "no release in it" : "none");
    });
    if (!said || !(*Version::parse(*said) == cell.cuda.toolkit)) {
      return no_site(
          "toolkit",
          fmt::format("the image's CUDA toolkit at {} is not release {} ({}: {}); use an image with that "
                      "release, or name the series (\"{}.{}\") to take the image's",
                      cuda_home, cell.cuda.toolkit.str(), json, said ? "release " + *said : said.error().what,
                      cell.cuda.toolkit.major(), cell.cuda.toolkit.minor()));
    }
    release = cell.cuda.toolkit;
  }
  return Toolkit{cuda_home, nvcc, release, spec.host_toolkit ? "host" : "image", ""};
}

Expected<Interpreter> ContainerSites::python_in(const Image& image, CommandRunner& probe, const Cell& cell,
                                                const std::string& python) {
  const Expected<std::string>& py = asked(image.id + "|python|" + python, [&]() -> Expected<std::string> {
    const CommandResult r = probe.run({python, "-c", kPythonVersionProbe}, {"PATH=/usr/bin:/bin"}, kQuestionTimeout);
    const auto tag = r.ok() ? PythonTag::parse(trim(r.output)) : std::nullopt;
    if (tag) return tag->str();
    return fail(trim(r.output).substr(0, 200));
  });
  if (!py || *py != cell.python.str()) {
    return no_site(
        "python",
        fmt::format("no Python {} at {} in {} ({}); set container.python (e.g. /usr/bin/python{{python_version}}) "
                    "or use an image with it",
                    cell.python.dotted(), python, image.name, py ? "it is " + *py : py.error().what));
  }
  return Interpreter{python, cell.python};
}

const std::string& ContainerSites::compiler_in(const Image& image, CommandRunner& probe) {
  if (!compilers_.count(image.id)) {
    const CommandResult r = probe.run({"/usr/bin/env", "c++", "--version"}, {}, kQuestionTimeout);
    compilers_[image.id] = r.ok() ? split(r.output, '\n').front() : std::string("?");
  }
  return compilers_[image.id];
}

// The engine, the image of the cell's CUDA set, a host toolkit to mount where asked, then the
// toolkit and the Python in the image: each looked for once, the first that fails names the step.
SiteResult ContainerSites::site_for(const PlannedCell& p) {
  if constexpr (kWindowsHost) {
    // The images are Linux ones, for linux_* wheels; a win_amd64 wheel is built in a Visual
    // Studio environment on the host itself.
    return no_site(
        "engine",
        "provision: container cannot run on a Windows host: fabuild's build containers are Linux images for "
        "linux_* wheels; set provision: host for this cell (win_amd64 wheels build on the host, in a Visual Studio "
        "developer environment), or build its linux_* cells on a Linux machine");
  }
  const Cell& cell = p.cell;
  const ContainerSpec& spec = plan_.container;
  const Expected<const ContainerEngine*> found_engine = engine();
  if (!found_engine) return tl::make_unexpected(found_engine.error());
  const ContainerEngine& engine = **found_engine;
  const ToolchainPlan toolchain = plan_.toolchain(p);
  const Expected<Image>& resolved = image_for(cell, toolchain, engine);
  if (!resolved) return tl::make_unexpected(resolved.error());
  const Image& image = *resolved;

  Site site;
  ContainerPlace place{engine, image, spec.network, {}, engine_env_, run_id_, runner_};
  const bool rocm = cell.rocm();
  std::string cuda_home = spec.cuda_home.empty() ? (rocm ? "/opt/rocm" : "/usr/local/cuda") : spec.cuda_home;
  if (spec.host_toolkit) {
    const Probed<Toolkit> found = rocm ? host_.find_rocm(cell.cuda.toolkit) : host_.find_toolkit(cell.cuda.toolkit);
    const std::optional<Toolkit>& toolkit = found.found;
    if (!toolkit) {
      return no_site("toolkit", (rocm ? HostProbe::missing_rocm(cell.cuda.toolkit, found.tried)
                                      : HostProbe::missing_toolkit(cell.cuda.toolkit, found.tried)) +
                                    " (container: {toolkit: host} mounts it)");
    }
    cuda_home = files_.resolve(toolkit->home).value_or(fs::path(toolkit->home)).string();
    place.mounts.push_back(Mount{cuda_home, cuda_home, true});
  }
  CommandRunner& probe = probe_runner(image, place.mounts);
  Expected<Toolkit> toolkit = toolkit_in(image, probe, cell, cuda_home);
  if (!toolkit) return tl::make_unexpected(toolkit.error());
  site.toolkit = std::move(*toolkit);
  Expected<Interpreter> python = python_in(image, probe, cell, toolchain.python);
  if (!python) return tl::make_unexpected(python.error());
  site.python = std::move(*python);

  site.compiler = compiler_in(image, probe);
  site.venv_root = (plan_.cache_root / "venvs" /
                    fmt::format("{}-{}", fs::path(engine.program).filename().string(), short_id(image.id)))
                       .string();
  files_.create_directories(site.venv_root);  // a failure shows when its environment is made there
  site.path_tail = image.path_env();
  site.runner = &probe;
  site.torch_key = image.id;
  site.container = std::move(place);
  return site;
}

void run_in_container(CellRun& run, const ContainerPlace& place, std::vector<Mount> mounts,
                      std::shared_ptr<Files> files) {
  const std::string name = container_name(place.run_id, run.id);
  const std::string staging = run.staging_dir;
  const std::string home = (fs::path(staging) / "home").string();
  mounts.insert(mounts.begin(), Mount{staging, staging, false});
  mounts.insert(mounts.end(), place.mounts.begin(), place.mounts.end());

  ContainerSettings settings;
  settings.name = name;
  settings.image = place.image.id;
  settings.user = invoking_user();
  settings.home = home;
  settings.network = place.network;
  settings.memory = "{memory_mb}m";
  settings.cpus = "{cores}";
  settings.mounts = std::move(mounts);
  settings.labels = {{"fabuild.run", place.run_id},
                     {"fabuild.cell", run.id},
                     {"fabuild.host", host_label()},
                     {"fabuild.pid", std::to_string(current_pid())}};

  std::vector<Step> steps;
  steps.push_back(
      Step{"home", {}, {}, {}, [home, files](StepContext&) -> StepResult { return files->create_directories(home); }});
  Step start{"container", start_argv(place.engine, settings), {}, {}, {}};
  start.on_host = true;
  start.templated = true;  // --memory {memory_mb}m --cpus {cores}: the share the cell gets when it starts
  steps.push_back(std::move(start));
  run.steps.insert(run.steps.begin(), steps.begin(), steps.end());

  const ContainerEngine engine = place.engine;
  run.launch = [engine, name, staging](const Launch& l) {
    return Launch{exec_argv(engine, name, l.argv, l.env, l.cwd.empty() ? staging : l.cwd), {}, {}};
  };
  Cleanup cleanup;
  cleanup.argv = remove_argv(engine, name);
  cleanup.env = place.engine_env;
  cleanup.timeout = milliseconds(120000);
  cleanup.judge = [name](const ExitStatus& status, const std::string& output) -> StepResult {
    if (status.ok() || output.find("No such container") != std::string::npos ||
        output.find("no such container") != std::string::npos) {
      return {};
    }
    return fail(fmt::format("could not remove container {}: {}", name, trim(output)));
  };
  run.cleanup = std::move(cleanup);
}

}  // namespace fabuild
