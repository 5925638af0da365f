#include "provision/python_env.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/hash.h"
#include "util/json_read.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

constexpr const char* kReadyMarker = ".fabuild-ready";
constexpr const char* kBuildRequirements[] = {"setuptools", "wheel", "ninja", "packaging", "psutil"};

// The Python programs fabuild runs in a cell's interpreter, as .py files in src/provision/py/
// embedded at build time (CMakeLists.txt, fabuild_embed): torch_probe.py finds torch without
// importing it; torch_check.py imports it and compares it with the cell (its header says how);
// import_check.py imports a built wheel's module with that torch.
extern "C" const char fabuild_py_torch_probe_start[];
extern "C" const std::size_t fabuild_py_torch_probe_size;
extern "C" const char fabuild_py_torch_check_start[];
extern "C" const std::size_t fabuild_py_torch_check_size;
const std::string kProbeScript(fabuild_py_torch_probe_start, fabuild_py_torch_probe_size);
extern "C" const char fabuild_py_import_check_start[];
extern "C" const std::size_t fabuild_py_import_check_size;
extern "C" const char fabuild_py_torch_sweep_start[];
extern "C" const std::size_t fabuild_py_torch_sweep_size;
extern "C" const char fabuild_py_build_sources_start[];
extern "C" const std::size_t fabuild_py_build_sources_size;
extern "C" const char fabuild_py_gpu_code_start[];
extern "C" const std::size_t fabuild_py_gpu_code_size;
const std::string kCheckScript(fabuild_py_torch_check_start, fabuild_py_torch_check_size);

bool matches(const TorchProbe& has, const Cell& cell) {
  const std::optional<std::string>& gpu = cell.rocm() ? has.torch_hip : has.torch_cuda;
  if (!has.torch_version || !gpu) return false;
  const auto v = Version::parse(split(*has.torch_version, '+').front());
  // torch.version.hip reads "6.2.41134-65d174c3e": its major.minor is what counts.
  const std::vector<std::string> parts = split(split(*gpu, '-').front(), '.');
  const auto cuda = parts.size() >= 2 ? Version::parse(parts[0] + "." + parts[1]) : std::nullopt;
  const Version want = cell.wheel_cuda();
  return v && cuda && v->series() == cell.torch.series() && v->has_prefix(cell.torch) &&
         cuda->major() == want.major() && cuda->minor() == want.minor();
}

std::string torch_requirement(const Cell& cell) {
  return cell.torch.release().size() <= 2 ? fmt::format("torch=={}.*", cell.torch.series())
                                          : fmt::format("torch=={}", cell.torch.str());
}

}  // namespace

TorchProbe probe_torch(CommandRunner& runner, const std::string& python) {
  TorchProbe probe;
  const CommandResult r = runner.run({python, "-c", kProbeScript}, {"PATH=/usr/bin:/bin"}, std::chrono::seconds(60));
  if (!r.ok()) return probe;
  // An interpreter that prints something else has no usable torch for us.
  const std::optional<nlohmann::json> j = parse_json(r.output);
  if (!j) return probe;
  if (auto v = json_field<std::string>(*j, "torch_version")) probe.torch_version = *v;
  if (auto v = json_field<std::string>(*j, "torch_cuda")) probe.torch_cuda = *v;
  if (auto v = json_field<std::string>(*j, "torch_hip")) probe.torch_hip = *v;
  return probe;
}

EnvTool find_env_tool(bool pip_only, const Environment& env, CommandRunner& runner, const std::string& python) {
  EnvTool tool;
  if (!pip_only) tool.uv = env.find_program("uv");
  if (!tool.uv.empty()) tool.pip = read_pip_config(runner, python, env.entries());
  return tool;
}

PythonEnv plan_python_env(const Cell& cell, const Interpreter& python, const TorchProbe& has,
                          const std::string& venv_root, const std::string& torch_index, const EnvTool& tool) {
  PythonEnv env;
  const std::string cuda = cell.torch_index_tag();  // cu128, rocm6.2.4
  env.key = fmt::format("{}-torch{}-{}", cell.python.str(), cell.torch.str(), cuda);
  // "TRUE"/"FALSE": torch's ABI must be the cell's; "FORCE:<env>": the package's setup.py forces
  // the C++11 ABI on through <env>, so any torch serves (FlashAttention builds both ABIs of
  // torch 2.6 against its cu124 install, cxx11abi FALSE, this way); "ANY": Windows has no such ABI.
  std::string abi = to_string(cell.abi);
  if (cell.platform == Platform::kWinAmd64) {
    abi = "ANY";
  } else if (cell.abi == Abi::kTrue && !cell.package->cxx11_abi_env.empty() && cell.command().empty()) {
    abi = "FORCE:" + cell.package->cxx11_abi_env;
  }
  if (matches(has, cell)) {
    env.python = python.path;
    env.bin_dir = fs::path(python.path).parent_path().string();
  } else {
    env.venv = (fs::path(venv_root) / env.key).string();
    // A Windows venv keeps its programs in Scripts\, its interpreter as python.exe.
    const bool windows = cell.platform == Platform::kWinAmd64;
    env.bin_dir = (fs::path(env.venv) / (windows ? "Scripts" : "bin")).string();
    env.python = (fs::path(env.bin_dir) / (windows ? "python.exe" : "python")).string();
    if (!venv_ready(env.venv)) {
      const bool uv = !tool.uv.empty();
      // uv's venv has no pip unless seeded; a pip source and `frontend: pip` run it there.
      const auto uv_vars = uv ? uv_env(tool.pip) : std::vector<std::pair<std::string, std::string>>{};
      if (uv) {
        env.setup.push_back({"venv", {tool.uv, "venv", "--seed", "--python", python.path, env.venv}, uv_vars});
      } else {
        env.setup.push_back({"venv", {python.path, "-m", "venv", "--clear", env.venv}, {}});
      }
      const std::vector<std::string> install =
          uv ? std::vector<std::string>{tool.uv, "pip", "install", "--python", env.python}
             : std::vector<std::string>{env.python, "-m", "pip", "install", "--disable-pip-version-check"};
      std::vector<std::string> torch = install;
      torch.push_back(torch_requirement(cell));
      std::vector<std::string> tools = install;
      for (const char* r : kBuildRequirements) tools.emplace_back(r);
      // A directory of wheels serves everything, with no index at all (hermetic builds).
      const bool local = !torch_index.empty() && fs::path(torch_index).is_absolute();  // C:\wheels too
      if (local) {
        for (auto* argv : {&torch, &tools}) argv->insert(argv->end(), {"--no-index", "--find-links", torch_index});
      } else {
        if (uv) {
          const auto own = uv_index_args(tool.pip, !torch_index.empty());
          const auto pips = uv_index_args(tool.pip);
          torch.insert(torch.end(), own.begin(), own.end());
          tools.insert(tools.end(), pips.begin(), pips.end());
        }
        if (!torch_index.empty()) torch.insert(torch.end(), {"--index-url", torch_index + "/" + cuda});
      }
      env.setup.push_back({"torch", torch, uv_vars});
      env.setup.push_back({"tools", tools, uv_vars});
    }
  }
  env.check = {env.python,
               "-c",
               kCheckScript,
               cell.torch.series(),
               cell.rocm() ? "rocm" + cell.wheel_cuda().str() : cell.wheel_cuda().str(),
               abi};
  return env;
}

std::vector<std::string> torch_check_argv(const PythonEnv& env, const std::string& seen, const std::string& stamp_dir) {
  std::vector<std::string> argv = env.check;
  argv.push_back(seen);
  if (!stamp_dir.empty()) {
    // One stamp per interpreter and (series, CUDA, ABI): the script's first argument is its code.
    std::string what = argv.front();
    for (std::size_t i = 3; i < env.check.size(); ++i) what += '\n' + env.check[i];
    argv.push_back((fs::path(stamp_dir) / (hex(sha256_of(what)).substr(0, 24) + ".json")).string());
  }
  return argv;
}

std::vector<std::string> import_check_argv(const std::string& python, const std::string& smoke,
                                           const std::string& module) {
  return {python, "-c", std::string(fabuild_py_import_check_start, fabuild_py_import_check_size), smoke, module};
}

std::vector<std::string> build_sources_argv(const std::string& python, const std::string& out) {
  return {python, "-c", std::string(fabuild_py_build_sources_start, fabuild_py_build_sources_size), out};
}

std::vector<std::string> gpu_code_argv(const std::string& python, const std::string& smoke,
                                       const std::string& cuobjdump) {
  return {python, "-c", std::string(fabuild_py_gpu_code_start, fabuild_py_gpu_code_size), smoke, cuobjdump};
}

std::vector<std::string> torch_sweep_argv(const std::string& python, const std::string& smoke,
                                          const std::string& module, const std::string& series) {
  return {python, "-c", std::string(fabuild_py_torch_sweep_start, fabuild_py_torch_sweep_size), smoke, module, series};
}

bool venv_ready(const std::string& venv) {
  std::error_code ec;
  return !venv.empty() && fs::exists(fs::path(venv) / kReadyMarker, ec);
}

void mark_venv_ready(const std::string& venv) { std::ofstream(fs::path(venv) / kReadyMarker) << "ok\n"; }

}  // namespace fabuild
