#pragma once

// The Python environment a host cell builds in: the interpreter itself when it already has the
// torch the cell needs (boxes that ship torch), else a virtualenv per (Python, torch, CUDA)
// that fabuild creates once, fills from the torch index, and reuses.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "matrix/cell.h"
#include "provision/host.h"
#include "provision/pip_config.h"
#include "util/command.h"
#include "util/environment.h"

namespace fabuild {

// Prints an interpreter's version as PythonTag::parse reads it: "3.12", "3.13t" when it is a
// free-threaded build (PEP 703's Py_GIL_DISABLED). Python 3.2 and later.
inline constexpr const char* kPythonVersionProbe =
    "import sys, sysconfig; print('%d.%d' % sys.version_info[:2] + "
    "('t' if sysconfig.get_config_var('Py_GIL_DISABLED') else ''))";

// What an interpreter has, read without importing torch (fast enough for --dry-run).
struct TorchProbe {
  std::optional<std::string> torch_version;  // "2.11.0", "2.8.0+cu128"
  std::optional<std::string> torch_cuda;     // "13.0"
  std::optional<std::string> torch_hip;      // "6.2.41134-65d174c3e" (ROCm builds)
};
TorchProbe probe_torch(CommandRunner& runner, const std::string& python);

// One process that makes or fills an environment.
struct SetupCommand {
  std::string name;  // "venv", "torch", "tools"
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // on top of the inherited environment
};

// What makes environments: the interpreter's own venv and pip, or uv (`uv`: its path), given
// the indexes pip is configured with (pip_config.h), so that both install from the same place.
struct EnvTool {
  std::string uv;  // "" = venv + pip
  PipConfig pip;   // uv: where pip installs from
};
// What makes a host's environments: uv (unless `pip_only`) when it is on `env`'s PATH, with the
// indexes pip is configured with for `python`; else venv and pip.
EnvTool find_env_tool(bool pip_only, const Environment& env, CommandRunner& runner, const std::string& python);

struct PythonEnv {
  std::string key;      // "cp312-torch2.11-cu130": one environment per key
  std::string python;   // the interpreter builds run with
  std::string bin_dir;  // put first on PATH (ninja lives there)
  std::string venv;     // "" when the interpreter is used as it is
  // Processes that create and fill the venv, in order; empty when there is nothing to do.
  std::vector<SetupCommand> setup;
  // Imports torch and fails, saying why, unless its version, CUDA build and C++11 ABI are the cell's.
  std::vector<std::string> check;
};

// `venv_root`: where venvs live (the cache); `torch_index`: "" for pip's configured index,
// a PyTorch-style base URL to which the cell's cuXYZ is appended, or an absolute directory
// of wheels that pip installs everything from, with no index.
PythonEnv plan_python_env(const Cell& cell, const Interpreter& python, const TorchProbe& has,
                          const std::string& venv_root, const std::string& torch_index, const EnvTool& tool = {});

// The check's argv for one use: it writes torch's version to `seen` ("-": nowhere) and, with a
// `stamp_dir`, keeps a stamp there per interpreter and cell kind, so that an unchanged torch is
// imported once rather than before every cell (the script says "checked before").
std::vector<std::string> torch_check_argv(const PythonEnv& env, const std::string& seen, const std::string& stamp_dir);

// The import smoke test of a built wheel (py/import_check.py): `module` imported from the wheel
// unpacked in `smoke`, after torch. Set FABUILD_GO to start it early: it imports torch, then
// waits for that file to exist.
std::vector<std::string> import_check_argv(const std::string& python, const std::string& smoke,
                                           const std::string& module);

// What a package's build compiles (py/build_sources.py): its setup.py, run in its directory up to
// its setup() call, writes its extensions' sources to `out` as JSON ({"sources": [...]}, or
// {"error": ...}); the process ends well either way.
std::vector<std::string> build_sources_argv(const std::string& python, const std::string& out);

// The GPU code of an unpacked wheel's compiled modules (py/gpu_code.py): the SASS and PTX
// archs cuobjdump lists (`cuobjdump`, else triton's, else PATH's), as the fact gpu_code.
std::vector<std::string> gpu_code_argv(const std::string& python, const std::string& smoke,
                                       const std::string& cuobjdump);

// The check of an unpacked wheel under the torch of this environment (py/torch_sweep.py,
// docs/stable-abi.md): its module loaded, its ops and their schemas, its packages imported, the
// GPU check where there is a GPU. It reports one fact, torch_proof_<series>, and ends well
// whatever it finds.
std::vector<std::string> torch_sweep_argv(const std::string& python, const std::string& smoke,
                                          const std::string& module, const std::string& series);

// Whether the venv was completed by an earlier run (its marker file exists).
bool venv_ready(const std::string& venv);
// Written after the venv passed its check.
void mark_venv_ready(const std::string& venv);

}  // namespace fabuild
