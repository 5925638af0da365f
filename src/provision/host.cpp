#include "provision/host.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "matrix/yaml_document.h"
#include "matrix/yaml_read.h"
#include "provision/python_env.h"
#include "provision/windows_host.h"
#include "util/error.h"
#include "util/json_read.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kProbeTimeout{30000};

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && (fs::status(p, ec).permissions() & fs::perms::owner_exec) != fs::perms::none;
}

std::string describe(const std::vector<Probe>& tried) {
  std::vector<std::string> parts;
  for (const auto& p : tried) parts.push_back(p.candidate + ": " + p.outcome);
  return parts.empty() ? "nowhere to look" : join(parts, "; ");
}

// Directories under `root` whose name starts with `prefix`, newest version first.
std::vector<fs::path> versioned_dirs(const fs::path& root, const std::string& prefix) {
  std::vector<std::pair<Version, fs::path>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const auto v = Version::parse(rest.substr(0, rest.find_first_not_of("0123456789.")));
    if (v) found.emplace_back(*v, e.path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return b.first < a.first; });
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

// msvc: {vcvarsall: PATH, toolset: "14.44", toolsets: {"12.4": "14.38"}}
void read_msvc(const yaml::Reader& r, const YAML::Node& node, MsvcToolchain& msvc) {
  r.check_keys(node, {"vcvarsall", "toolset", "toolsets"}, "msvc");
  if (const auto n = node["vcvarsall"]) msvc.vcvarsall = r.scalar(n, "msvc.vcvarsall");
  if (const auto n = node["toolset"]) msvc.toolset = trim(r.scalar(n, "msvc.toolset"));
  if (const auto n = node["toolsets"]) {
    r.expect_map(n, "msvc.toolsets");
    for (const auto& entry : n) {
      const auto v = parse_cuda_version(entry.first.Scalar());
      if (!v)
        r.fail(entry.first, fmt::format("'{}' is not a CUDA version", entry.first.Scalar()),
               "e.g. \"12.4\": \"14.38\"");
      msvc.toolsets[*v] = trim(r.scalar(entry.second, "msvc.toolsets." + entry.first.Scalar()));
    }
  }
}

}  // namespace

std::optional<Version> nvcc_release_in(const std::string& output) {
  static const std::regex release(R"(release (\d+)\.(\d+))");
  std::smatch m;
  if (!std::regex_search(output, m, release)) return std::nullopt;
  return Version::parse(m[1].str() + "." + m[2].str());
}

std::string nvcc_build_in(const std::string& output) {
  static const std::regex build(R"(\bV(\d+\.\d+\.\d+)\b)");
  std::smatch m;
  return std::regex_search(output, m, build) ? m[1].str() : std::string();
}

HostToolchains load_host_toolchains(const std::string& path) {
  HostToolchains t;
  const auto root = load_single_document_file(path);
  if (!root || root->IsNull()) return t;
  const yaml::Reader r(path);
  const std::string shape = "this file has cuda: {\"12.8\": DIR}, rocm: {\"6.2\": DIR} and python: {cp312: PATH}";
  if (!root->IsMap()) r.fail(*root, "toolchains/host.yaml is a mapping with cuda:, rocm: and python:", shape);
  r.check_keys(*root, {"cuda", "rocm", "python", "msvc"}, "toolchains/host.yaml");
  for (const auto& item : *root) {
    const std::string key = item.first.Scalar();
    r.expect_map(item.second, key);
    if (key == "msvc") {
      read_msvc(r, item.second, t.msvc);
      continue;
    }
    for (const auto& entry : item.second) {
      const std::string name = entry.first.Scalar();
      const std::string dir = r.scalar(entry.second, key + "." + name);
      if (key == "cuda") {
        const auto v = parse_cuda_version(name);
        if (!v) r.fail(entry.first, fmt::format("'{}' is not a CUDA version", name), shape);
        t.cuda[*v] = dir;
      } else if (key == "rocm") {
        const auto v = parse_rocm_version(name);
        if (!v) r.fail(entry.first, fmt::format("'{}' is not a ROCm version", name), shape);
        t.rocm[*Version::parse(fmt::format("{}.{}", v->major(), v->minor()))] = dir;
      } else {
        const auto tag = PythonTag::parse(name);
        if (!tag || !tag->known()) r.fail(entry.first, fmt::format("unknown Python tag '{}'", name), shape);
        t.python[tag->str()] = dir;
      }
    }
  }
  return t;
}

HostProbe::HostProbe(CommandRunner& runner, HostToolchains toolchains, Environment env, bool windows)
    : runner_(runner), toolchains_(std::move(toolchains)), env_(std::move(env)), windows_(windows) {}

std::string HostProbe::missing_python_here(const PythonTag& tag, const std::vector<Probe>& tried) const {
  return windows_ ? missing_windows_python(tag, tried) : missing_python(tag, tried);
}

std::string HostProbe::env(const std::string& name) const { return env_.value(name); }

const HostProbe::NvccAnswer& HostProbe::nvcc_release(const std::string& nvcc) {
  auto it = nvcc_cache_.find(nvcc);
  if (it == nvcc_cache_.end()) {
    NvccAnswer answer;
    if (!executable(nvcc)) {
      answer.outcome = "no " + nvcc;
    } else {
      const CommandResult r = runner_.run({nvcc, "--version"}, {"PATH=/usr/bin:/bin"}, kProbeTimeout);
      answer.version = r.ok() ? nvcc_release_in(r.output) : std::nullopt;
      answer.build = r.ok() ? nvcc_build_in(r.output) : std::string();
      answer.outcome = answer.version
                           ? "nvcc " + answer.version->str()
                           : fmt::format("nvcc --version: {}", r.ok() ? "no release number" : r.status.describe());
    }
    it = nvcc_cache_.emplace(nvcc, std::move(answer)).first;
  }
  return it->second;
}

std::optional<Version> cuda_release_in(const std::string& version_json) {
  const std::optional<nlohmann::json> j = parse_json(version_json);
  const auto cuda = j ? json_field<nlohmann::json>(*j, "cuda") : std::nullopt;
  const auto version = cuda ? json_field<std::string>(*cuda, "version") : std::nullopt;
  return version ? Version::parse(*version) : std::nullopt;
}

Probed<Toolkit> HostProbe::find_toolkit(const Version& cuda) {
  if (windows_) return find_windows_cuda(runner_, toolchains_, env_, cuda);
  std::vector<Probe> tried;
  std::vector<std::pair<std::string, std::string>> candidates;  // dir, how found
  const std::string series = fmt::format("{}.{}", cuda.major(), cuda.minor());
  const bool pinned = cuda.release().size() > 2;  // a release, "12.9.1": its version.json must say so
  for (const Version& key : {cuda, *Version::parse(series)}) {
    if (const auto it = toolchains_.cuda.find(key); it != toolchains_.cuda.end()) {
      candidates.emplace_back(it->second, "toolchains/host.yaml");
    }
  }
  if (pinned) candidates.emplace_back("/usr/local/cuda-" + cuda.str(), "");
  candidates.emplace_back("/usr/local/cuda-" + series, "");
  if (!env("CUDA_HOME").empty()) candidates.emplace_back(env("CUDA_HOME"), "$CUDA_HOME");
  for (const std::string& var : cuda_path_variables(cuda)) {
    if (!env(var).empty()) candidates.emplace_back(env(var), "$" + var);
  }
  candidates.emplace_back("/usr/local/cuda", "");

  std::vector<std::string> seen;
  for (const auto& [dir, how] : candidates) {
    if (std::find(seen.begin(), seen.end(), dir) != seen.end()) continue;
    seen.push_back(dir);
    const std::string nvcc = (fs::path(dir) / "bin" / "nvcc").string();
    const NvccAnswer& answer = nvcc_release(nvcc);
    const auto& version = answer.version;
    const std::string& outcome = answer.outcome;
    const std::string where = how.empty() ? dir : fmt::format("{} ({})", dir, how);
    if (!version || version->major() != cuda.major() || version->minor() != cuda.minor()) {
      tried.push_back({where, outcome});
      continue;
    }
    // nvcc says "release 12.9, V12.9.86": the toolkit's own release is in version.json, which
    // NVIDIA's installers write; a pinned cell takes only the toolkit that says its release.
    std::ifstream json(fs::path(dir) / "version.json");
    const auto release = json ? cuda_release_in(std::string(std::istreambuf_iterator<char>(json), {})) : std::nullopt;
    if (pinned && release != cuda) {
      tried.push_back({where, fmt::format("{}, but {}", outcome,
                                          release ? "version.json says release " + release->str()
                                                  : "no version.json says its release")});
      continue;
    }
    tried.push_back({where, outcome});
    return {Toolkit{dir, nvcc, pinned ? cuda : *version, "host", answer.build}, std::move(tried)};
  }
  return {std::nullopt, std::move(tried)};
}

std::optional<Version> rocm_release_in(const std::string& text) {
  static const std::regex release(R"(^\s*(\d{1,2})\.(\d{1,2})(?:\.(\d{1,4}))?)");
  std::smatch m;
  const std::string head = text.substr(0, 64);
  if (!std::regex_search(head, m, release)) return std::nullopt;
  return Version::parse(m[1].str() + "." + m[2].str() + (m[3].matched ? "." + m[3].str() : std::string()));
}

Probed<Toolkit> HostProbe::find_rocm(const Version& rocm) {
  std::vector<Probe> tried;
  std::vector<std::pair<std::string, std::string>> candidates;  // dir, how found
  const Version series = *Version::parse(fmt::format("{}.{}", rocm.major(), rocm.minor()));
  if (const auto it = toolchains_.rocm.find(series); it != toolchains_.rocm.end()) {
    candidates.emplace_back(it->second, "toolchains/host.yaml");
  }
  // /opt/rocm-6.2.4 and the like, newest first.
  std::vector<std::string> versioned;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/opt", ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(fmt::format("rocm-{}.{}", rocm.major(), rocm.minor()))) versioned.push_back(e.path().string());
  }
  std::sort(versioned.rbegin(), versioned.rend());
  if (versioned.empty()) versioned.push_back(fmt::format("/opt/rocm-{}", rocm.str()));
  for (const auto& d : versioned) candidates.emplace_back(d, "");
  if (!env("ROCM_PATH").empty()) candidates.emplace_back(env("ROCM_PATH"), "$ROCM_PATH");
  if (!env("ROCM_HOME").empty()) candidates.emplace_back(env("ROCM_HOME"), "$ROCM_HOME");
  candidates.emplace_back("/opt/rocm", "");

  std::vector<std::string> seen;
  for (const auto& [dir, how] : candidates) {
    if (std::find(seen.begin(), seen.end(), dir) != seen.end()) continue;
    seen.push_back(dir);
    const std::string where = how.empty() ? dir : fmt::format("{} ({})", dir, how);
    std::ifstream info(fs::path(dir) / ".info" / "version");
    std::string text;
    std::getline(info, text);
    const auto version = rocm_release_in(text);
    const std::string hipcc = (fs::path(dir) / "bin" / "hipcc").string();
    if (!version) {
      tried.push_back({where, info ? "no release in .info/version" : "missing"});
      continue;
    }
    if (!executable(hipcc)) {
      tried.push_back({where, fmt::format("ROCm {} without bin/hipcc", version->str())});
      continue;
    }
    tried.push_back({where, "ROCm " + version->str()});
    if (version->major() == rocm.major() && version->minor() == rocm.minor()) {
      return {Toolkit{dir, hipcc, *version, "host", version->str()}, std::move(tried)};
    }
  }
  return {std::nullopt, std::move(tried)};
}

HostProbe::InterpreterAnswer HostProbe::interpreter_at(const std::string& python) {
  if (!executable(python)) return {std::nullopt, "missing"};
  const CommandResult r = runner_.run({python, "-c", std::string(kPythonVersionProbe) + "; print(sys.executable)"},
                                      {"PATH=/usr/bin:/bin"}, kProbeTimeout);
  const std::vector<std::string> lines = r.ok() ? split(trim(r.output), '\n') : std::vector<std::string>{};
  const auto tag = lines.empty() ? std::nullopt : PythonTag::parse(trim(lines.front()));
  if (!tag) return {std::nullopt, fmt::format("does not run ({})", r.status.describe())};
  const std::string real = lines.size() > 1 ? trim(lines[1]) : std::string();
  const bool usable = !real.empty() && fs::path(real).is_absolute() && executable(real);
  return {Interpreter{usable ? real : python, *tag}, "python " + tag->dotted()};
}

Probed<Interpreter> HostProbe::find_python(const PythonTag& tag) {
  if (windows_) return find_windows_python(runner_, toolchains_, env_, tag);
  std::vector<Probe> tried;
  const std::string exe = "python" + tag.dotted();
  std::vector<std::pair<std::string, std::string>> candidates;
  if (const auto it = toolchains_.python.find(tag.str()); it != toolchains_.python.end()) {
    candidates.emplace_back(it->second, "toolchains/host.yaml");
  }
  const std::string pyenv = !env("PYENV_ROOT").empty() ? env("PYENV_ROOT") : env("HOME") + "/.pyenv";
  // pyenv's shims only launch (in ~0.5 s of shell) one of the versions below, which are tried
  // directly; fabuild starts the interpreter several times a cell.
  const auto normal = [](const fs::path& p) {
    const fs::path n = p.lexically_normal();
    return n.has_filename() ? n : n.parent_path();  // "shims/" is "shims"
  };
  const fs::path shims = normal(fs::path(pyenv) / "shims");
  for (const auto& dir : split(env("PATH"), ':')) {
    if (!dir.empty() && normal(dir) != shims) {
      candidates.emplace_back((fs::path(dir) / exe).string(), "PATH");
    }
  }
  // pyenv's 3.13.0t and uv's cpython-3.13.1+freethreaded-... start as the release's; the probe
  // tells a free-threaded interpreter from the other.
  const std::string release = tag.release().dotted();
  for (const auto& d : versioned_dirs(fs::path(pyenv) / "versions", release + ".")) {
    candidates.emplace_back((d / "bin" / exe).string(), "pyenv");
  }
  const fs::path uv = env("HOME").empty() ? fs::path() : fs::path(env("HOME")) / ".local/share/uv/python";
  for (const auto& d : versioned_dirs(uv, "cpython-" + release + ".")) {
    candidates.emplace_back((d / "bin" / exe).string(), "uv");
  }

  std::vector<std::string> seen;
  for (const auto& [path, how] : candidates) {
    if (std::find(seen.begin(), seen.end(), path) != seen.end()) continue;
    seen.push_back(path);
    const InterpreterAnswer answer = interpreter_at(path);
    // Missing python3.X on each PATH entry is noise; keep only what was there.
    if (how == "PATH" && answer.outcome == "missing") continue;
    tried.push_back({fmt::format("{} ({})", path, how), answer.outcome});
    if (answer.found && answer.found->tag == tag) return {answer.found, std::move(tried)};
  }
  if (std::none_of(tried.begin(), tried.end(), [](const Probe& p) { return p.candidate.ends_with("(PATH)"); })) {
    tried.push_back({exe + " on PATH", "missing"});
  }
  return {std::nullopt, std::move(tried)};
}

std::string HostProbe::missing_toolkit(const Version& cuda, const std::vector<Probe>& tried, ToolkitSource source) {
  const std::string head = fmt::format("no CUDA {} toolkit on this host (tried {})", cuda.str(), describe(tried));
  if (!pip_has_cuda_compiler(cuda)) {
    return fmt::format(
        "{}; PyPI has no CUDA {}.x compiler (its {}.x packages carry ptxas only), so fabuild cannot "
        "install one: install the toolkit, e.g. to /usr/local/cuda-{}, name its directory in "
        "toolchains/host.yaml, or build in a container from an image with CUDA {} (provision: container)",
        head, cuda.major(), cuda.major(), cuda.str(), cuda.str());
  }
  return fmt::format("{}; install it, e.g. to /usr/local/cuda-{}, or name its directory in toolchains/host.yaml{}",
                     head, cuda.str(),
                     source == ToolkitSource::kHost ? ", or let fabuild install NVIDIA's packages from PyPI "
                                                      "(toolkit: auto or pip)"
                                                    : "");
}

std::string HostProbe::missing_rocm(const Version& rocm, const std::vector<Probe>& tried) {
  return fmt::format(
      "no ROCm {}.{} on this host (tried {}); install it (AMD's packages put it in /opt/rocm-{}.{}.x), or "
      "name its directory in toolchains/host.yaml under rocm:",
      rocm.major(), rocm.minor(), describe(tried), rocm.major(), rocm.minor());
}

std::string HostProbe::missing_python(const PythonTag& tag, const std::vector<Probe>& tried) {
  return fmt::format(
      "no Python {} on this host (tried {}); install python{} (e.g. `pyenv install {}` or "
      "`uv python install {}`), or name it in toolchains/host.yaml",
      tag.dotted(), describe(tried), tag.dotted(), tag.dotted(), tag.dotted());
}

}  // namespace fabuild
