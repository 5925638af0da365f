#include "provision/windows_host.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "provision/msvc_env.h"
#include "provision/python_env.h"
#include "util/text.h"

namespace fabuild {

std::vector<std::string> cuda_path_variables(const Version& cuda) {
  return {fmt::format("CUDA_PATH_V{}_{}", cuda.major(), cuda.minor()),
          fmt::format("CUDA_PATH_V{}{}", cuda.major(), cuda.minor())};
}

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::seconds kProbeTimeout{60};
const std::string kPythonScript = std::string(kPythonVersionProbe) + "; print(sys.executable)";

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string describe(const std::vector<Probe>& tried) {
  std::vector<std::string> parts;
  for (const auto& p : tried) parts.push_back(p.candidate + ": " + p.outcome);
  return parts.empty() ? "nowhere to look" : join(parts, "; ");
}

// Windows programs print CRLF; some, in cmd's /u mode, UTF-16.
std::vector<std::string> output_lines(const std::string& output) {
  std::vector<std::string> lines;
  for (const auto& line : split(decode_cmd_output(output), '\n')) {
    if (!trim(line).empty()) lines.push_back(trim(line));
  }
  return lines;
}

std::string first_line(const std::string& output) {
  const auto lines = output_lines(output);
  return lines.empty() ? std::string() : lines.front();
}

// A program on PATH, as `where` finds it (the Environment's own search, with PATH's separator).
std::string on_path(const Environment& env, const std::string& program) { return env.find_program(program); }

// What `python` reports when asked for its version and executable: (version, sys.executable).
std::optional<Interpreter> ask_python(CommandRunner& runner, const Environment& env,
                                      const std::vector<std::string>& argv, std::string& outcome) {
  std::vector<std::string> full = argv;
  full.insert(full.end(), {"-c", kPythonScript});
  const CommandResult r = runner.run(full, env.entries(), kProbeTimeout);
  const auto lines = r.ok() ? output_lines(r.output) : std::vector<std::string>{};
  const auto tag = lines.empty() ? std::nullopt : PythonTag::parse(lines.front());
  if (!tag) {
    outcome = r.ok() ? fmt::format("does not say its version ({})", first_line(r.output))
                     : fmt::format("does not run ({})", r.status.describe());
    return std::nullopt;
  }
  outcome = "python " + tag->dotted();
  const std::string exe = lines.size() > 1 ? lines[1] : std::string();
  if (exe.empty() || !is_file(exe)) {
    outcome += fmt::format(", but its sys.executable '{}' is no file", exe);
    return std::nullopt;
  }
  return Interpreter{exe, *tag};
}

}  // namespace

std::vector<std::string> vswhere_args() {
  return {"-latest",   "-products",        "*",    "-requires", "Microsoft.VisualStudio.Component.VC.Tools.x86.x64",
          "-property", "installationPath", "-utf8"};
}

Probed<std::string> find_vcvarsall(CommandRunner& runner, const HostToolchains& toolchains, const Environment& env) {
  std::vector<Probe> tried;
  if (!toolchains.msvc.vcvarsall.empty()) {
    const bool there = is_file(toolchains.msvc.vcvarsall);
    tried.push_back({toolchains.msvc.vcvarsall + " (toolchains/host.yaml)", there ? "found" : "missing"});
    if (there) return {toolchains.msvc.vcvarsall, std::move(tried)};
    return {std::nullopt, std::move(tried)};
  }
  std::vector<std::pair<std::string, std::string>> vswheres;  // path, how found
  if (const auto x86 = env.get("ProgramFiles(x86)")) {
    vswheres.emplace_back((fs::path(*x86) / "Microsoft Visual Studio" / "Installer" / "vswhere.exe").string(),
                          "%ProgramFiles(x86)%");
  } else {
    tried.push_back(
        {"%ProgramFiles(x86)%\\Microsoft Visual Studio\\Installer\\vswhere.exe", "ProgramFiles(x86) is not set"});
  }
  if (const std::string path = on_path(env, "vswhere.exe"); !path.empty()) vswheres.emplace_back(path, "PATH");
  bool ran = false;
  for (const auto& [vswhere, how] : vswheres) {
    const std::string where = fmt::format("{} ({})", vswhere, how);
    if (!is_file(vswhere)) {
      tried.push_back({where, "missing"});
      continue;
    }
    std::vector<std::string> argv = {vswhere};
    for (auto& a : vswhere_args()) argv.push_back(a);
    const CommandResult r = runner.run(argv, env.entries(), kProbeTimeout);
    ran = true;
    const std::string install = r.ok() ? first_line(r.output) : std::string();
    if (install.empty()) {
      tried.push_back({fmt::format("{} {}", where, join(vswhere_args(), " ")),
                       r.ok() ? "no installation with the x64 C++ tools (Microsoft.VisualStudio.Component.VC.Tools."
                                "x86.x64)"
                              : r.status.describe()});
      continue;
    }
    const std::string vcvarsall = (fs::path(install) / "VC" / "Auxiliary" / "Build" / "vcvarsall.bat").string();
    const bool there = is_file(vcvarsall);
    tried.push_back({vcvarsall + " (vswhere: " + install + ")", there ? "found" : "missing"});
    if (there) return {vcvarsall, std::move(tried)};
  }
  if (!ran && vswheres.empty()) tried.push_back({"vswhere.exe on PATH", "missing"});
  return {std::nullopt, std::move(tried)};
}

std::string msvc_toolset_for(const HostToolchains& toolchains, const Version& cuda) {
  const Version series = *Version::parse(fmt::format("{}.{}", cuda.major(), cuda.minor()));
  for (const Version& key : {cuda, series}) {
    if (const auto it = toolchains.msvc.toolsets.find(key); it != toolchains.msvc.toolsets.end()) return it->second;
  }
  return toolchains.msvc.toolset;
}

Probed<Toolkit> find_windows_cuda(CommandRunner& runner, const HostToolchains& toolchains, const Environment& env,
                                  const Version& cuda) {
  std::vector<Probe> tried;
  const std::string series = fmt::format("{}.{}", cuda.major(), cuda.minor());
  std::vector<std::pair<std::string, std::string>> candidates;  // dir, how found
  for (const Version& key : {cuda, *Version::parse(series)}) {
    if (const auto it = toolchains.cuda.find(key); it != toolchains.cuda.end()) {
      candidates.emplace_back(it->second, "toolchains/host.yaml");
    }
  }
  std::vector<std::string> vars = cuda_path_variables(cuda);
  vars.emplace_back("CUDA_PATH");
  for (const std::string& var : vars) {
    if (const auto dir = env.get(var); dir && !dir->empty()) {
      candidates.emplace_back(*dir, "%" + var + "%");
    } else {
      tried.push_back({"%" + var + "%", "not set"});
    }
  }
  if (const auto programs = env.get("ProgramFiles")) {
    candidates.emplace_back((fs::path(*programs) / "NVIDIA GPU Computing Toolkit" / "CUDA" / ("v" + series)).string(),
                            "");
  }

  std::vector<std::string> seen;
  for (const auto& [dir, how] : candidates) {
    if (std::find(seen.begin(), seen.end(), dir) != seen.end()) continue;
    seen.push_back(dir);
    const std::string where = how.empty() ? dir : fmt::format("{} ({})", dir, how);
    const std::string nvcc = (fs::path(dir) / "bin" / "nvcc.exe").string();
    if (!is_file(nvcc)) {
      tried.push_back({where, "no " + nvcc});
      continue;
    }
    const CommandResult r = runner.run({nvcc, "--version"}, env.entries(), kProbeTimeout);
    const auto version = r.ok() ? nvcc_release_in(r.output) : std::nullopt;
    if (!version) {
      tried.push_back({where, fmt::format("nvcc --version: {}", r.ok() ? "no release number" : r.status.describe())});
      continue;
    }
    tried.push_back({where, "nvcc " + version->str()});
    if (version->major() == cuda.major() && version->minor() == cuda.minor()) {
      return {Toolkit{dir, nvcc, *version, "host", nvcc_build_in(r.output)}, std::move(tried)};
    }
  }
  return {std::nullopt, std::move(tried)};
}

Probed<Interpreter> find_windows_python(CommandRunner& runner, const HostToolchains& toolchains, const Environment& env,
                                        const PythonTag& tag) {
  std::vector<Probe> tried;
  const auto accept = [&](const std::string& candidate, const std::vector<std::string>& argv) {
    std::string outcome;
    auto found = ask_python(runner, env, argv, outcome);
    tried.push_back({candidate, outcome});
    return found && found->tag == tag ? found : std::nullopt;
  };
  if (const auto it = toolchains.python.find(tag.str()); it != toolchains.python.end()) {
    if (!is_file(it->second)) {
      tried.push_back({it->second + " (toolchains/host.yaml)", "missing"});
    } else if (auto found = accept(it->second + " (toolchains/host.yaml)", {it->second})) {
      return {found, std::move(tried)};
    }
  }
  // The launcher python.org's installer puts in %SystemRoot% (for everyone) or the user's
  // %LOCALAPPDATA%; `py -3.12` starts the newest 3.12 it knows of.
  std::string py = on_path(env, "py.exe");
  for (const char* var : {"SystemRoot", "LOCALAPPDATA"}) {
    if (!py.empty()) break;
    if (const auto dir = env.get(var)) {
      const fs::path candidate = std::string(var) == "SystemRoot"
                                     ? fs::path(*dir) / "py.exe"
                                     : fs::path(*dir) / "Programs" / "Python" / "Launcher" / "py.exe";
      if (is_file(candidate)) py = candidate.string();
    }
  }
  if (py.empty()) {
    tried.push_back({"the py launcher (py.exe)", "missing"});
  } else if (auto found = accept(fmt::format("{} -{}", py, tag.dotted()), {py, "-" + tag.dotted()})) {
    return {found, std::move(tried)};
  }
  if (const std::string uv = on_path(env, "uv.exe"); uv.empty()) {
    tried.push_back({"uv.exe on PATH", "missing"});
  } else {
    const CommandResult r = runner.run({uv, "python", "find", tag.dotted()}, env.entries(), kProbeTimeout);
    const std::string path = r.ok() ? first_line(r.output) : std::string();
    if (path.empty() || !is_file(path)) {
      tried.push_back(
          {fmt::format("{} python find {}", uv, tag.dotted()), r.ok() ? "names no interpreter" : r.status.describe()});
    } else if (auto found = accept(fmt::format("{} (uv python find {})", path, tag.dotted()), {path})) {
      return {found, std::move(tried)};
    }
  }
  if (const std::string python = on_path(env, "python.exe"); !python.empty()) {
    if (auto found = accept(python + " (PATH)", {python})) return {found, std::move(tried)};
  }
  return {std::nullopt, std::move(tried)};
}

std::string missing_vcvarsall(const std::vector<Probe>& tried) {
  return fmt::format(
      "no Visual Studio with the C++ x64 tools on this host (tried {}); install Visual Studio 2022 or its Build "
      "Tools with the \"Desktop development with C++\" workload (component "
      "Microsoft.VisualStudio.Component.VC.Tools.x86.x64), or name a vcvarsall.bat in toolchains/host.yaml "
      "(msvc: {{vcvarsall: PATH}})",
      describe(tried));
}

std::string missing_windows_cuda(const Version& cuda, const std::vector<Probe>& tried) {
  return fmt::format(
      "no CUDA {} toolkit on this host (tried {}); install it with NVIDIA's installer (it sets CUDA_PATH_V{}_{} "
      "and installs to %ProgramFiles%\\NVIDIA GPU Computing Toolkit\\CUDA\\v{}), or name its directory in "
      "toolchains/host.yaml (cuda: {{\"{}\": DIR}})",
      cuda.str(), describe(tried), cuda.major(), cuda.minor(), cuda.str(), cuda.str());
}

std::string missing_windows_python(const PythonTag& tag, const std::vector<Probe>& tried) {
  return fmt::format(
      "no Python {} on this host (tried {}); install it (python.org's installer registers it with the py launcher, "
      "or `uv python install {}`), or name its python.exe in toolchains/host.yaml (python: {{{}: PATH}})",
      tag.dotted(), describe(tried), tag.dotted(), tag.str());
}

}  // namespace fabuild
