#include "app/host_sites.h"

#include <chrono>
#include <filesystem>

#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;

HostSites::HostSites(const Plan& plan, const Environment& env, CommandRunner& runner, Files& files, bool windows)
    : plan_(plan),
      env_(env),
      runner_(runner),
      files_(files),
      probe_(runner_, load_host_toolchains(host_toolchains_file(plan)), env_, windows) {}

SiteResult HostSites::site_for(const Cell& cell) {
  std::optional<Toolkit> toolkit;
  std::string why;
  if (cell.rocm()) {
    const Probed<Toolkit>& rocm = find_rocm(cell.cuda);
    toolkit = rocm.found;
    if (!toolkit) why = HostProbe::missing_rocm(cell.cuda.toolkit, rocm.tried);
  } else {
    const ToolkitChoice& choice = toolkit_for(cell);
    if (choice.toolkit) {
      toolkit = *choice.toolkit;
    } else {
      why = choice.toolkit.error().what;
    }
  }
  if (!toolkit) return no_site("toolkit", why);
  const Probed<Interpreter>& python = find_python(cell.python);
  if (!python.found) return no_site("python", probe_.missing_python_here(cell.python, python.tried));
  Site site;
  site.toolkit = *toolkit;
  site.python = *python.found;
  site.venv_root = (plan_.cache_root / "venvs").string();
  if (probe_.windows()) {  // the Visual Studio environment, captured once per toolset
    const auto& msvc = msvc_.for_cuda(cell.cuda.toolkit);
    if (!msvc) return no_site("msvc", msvc.error().what, msvc.error().hint);
    use_msvc(site, *msvc, env_);
  } else {
    site.path_tail = env_.value("PATH");
    site.compiler = compiler_version();
  }
  site.runner = &runner_;
  return site;
}

SiteResult HostSites::python_site(const Cell& cell) {
  const Probed<Interpreter>& python = find_python(cell.python);
  if (!python.found) return no_site("python", probe_.missing_python_here(cell.python, python.tried));
  Site site;
  site.python = *python.found;
  site.venv_root = (plan_.cache_root / "venvs").string();
  site.path_tail = env_.value("PATH");
  site.runner = &runner_;
  return site;
}

const ToolkitChoice& HostSites::toolkit_for(const Cell& cell) {
  const std::string key = toolkit_key(cell);
  auto it = toolkits_.find(key);
  if (it == toolkits_.end()) {
    it = toolkits_
             .emplace(key,
                      choose_toolkit(probe_, cell.cuda.toolkit, cell.toolkit_source(), plan_.cache_root / "toolkits"))
             .first;
    const ToolkitChoice& choice = it->second;
    // A mark that fails only makes the entry look older to the cache's trim.
    if (choice.install) {
      files_.touch(choice.install->dir());
    } else if (choice.toolkit && choice.toolkit->origin == "pip") {
      files_.touch(fs::path(choice.toolkit->home).parent_path().parent_path());  // <toolkits>/cuda-X.Y/nvidia/cu13
    }
  }
  return it->second;
}

const std::string& HostSites::compiler_version() {
  if (!compiler_) {
    const std::string cxx = env_.get("CXX").value_or("c++");
    const CommandResult r =
        runner_.run({"/usr/bin/env", cxx, "--version"}, {"PATH=" + env_.value("PATH")}, std::chrono::seconds(30));
    compiler_ = r.ok() ? split(r.output, '\n').front() : std::string("?");
  }
  return *compiler_;
}

const Probed<Toolkit>& HostSites::find_rocm(const GpuSet& set) {
  const std::string key = spell_gpu_set(GpuSet{set.toolkit, std::nullopt, set.backend});
  auto it = rocms_.find(key);
  if (it == rocms_.end()) it = rocms_.emplace(key, probe_.find_rocm(set.toolkit)).first;
  return it->second;
}

const Probed<Interpreter>& HostSites::find_python(const PythonTag& tag) {
  auto it = pythons_.find(tag.str());
  if (it == pythons_.end()) it = pythons_.emplace(tag.str(), probe_.find_python(tag)).first;
  return it->second;
}

}  // namespace fabuild
