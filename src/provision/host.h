#pragma once

// Finding a CUDA set's toolkit and a Python tag's interpreter on the build host. Every place
// looked at is recorded, so a cell that finds nothing can say what to install, and where.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "matrix/values.h"
#include "util/command.h"
#include "util/environment.h"
#include "util/version.h"

namespace fabuild {

// toolchains/host.yaml: explicit locations, looked at first.
//   cuda:   {"12.8": /opt/cuda-12.8}
//   rocm:   {"6.2": /opt/rocm-6.2.4}
//   python: {cp312: /opt/python3.12/bin/python3.12}
//   msvc:   {vcvarsall: 'C:\...\vcvarsall.bat', toolset: "14.44", toolsets: {"12.4": "14.38"}}
struct MsvcToolchain {
  std::string vcvarsall;                    // "" = vswhere finds it
  std::string toolset;                      // -vcvars_ver for every CUDA set; "" = vcvarsall's default
  std::map<Version, std::string> toolsets;  // by CUDA set, before `toolset`
};
struct HostToolchains {
  std::map<Version, std::string> cuda;
  std::map<Version, std::string> rocm;        // by major.minor
  std::map<std::string, std::string> python;  // by tag, "cp312"
  MsvcToolchain msvc;                         // Windows hosts (windows_host.h)
};
// Reads it; a missing file is an empty set, a malformed one a UserError at file:line:col.
HostToolchains load_host_toolchains(const std::string& path);

struct Probe {
  std::string candidate;  // "/usr/local/cuda-12.8 ($CUDA_HOME)"
  std::string outcome;    // "missing", "nvcc 13.0", "python 3.11"
};

// What a search found (nullopt: nothing that will do), with every place it looked, in order.
template <class T>
struct Probed {
  std::optional<T> found;
  std::vector<Probe> tried;
};

// The X.Y of "release X.Y" in `nvcc --version` output.
std::optional<Version> nvcc_release_in(const std::string& output);
// nvcc's own version, "13.2.86" from "V13.2.86"; "" when it says none.
std::string nvcc_build_in(const std::string& output);

// A CUDA toolkit, or a ROCm installation (home its root, nvcc its hipcc).
struct Toolkit {
  std::string home;  // CUDA_HOME, or ROCM_HOME for ROCm
  std::string nvcc;
  Version version;
  std::string origin = "host";  // "host": installed on this machine; "pip": NVIDIA's packages from PyPI
  std::string build;            // nvcc's own version, "13.2.86", when known
};

// The release in a CUDA toolkit's version.json ({"cuda": {"version": "12.9.1"}}), as NVIDIA's
// installers write it; nvcc --version names only major.minor and nvcc's own build.
std::optional<Version> cuda_release_in(const std::string& version_json);

// The release in a ROCm installation's .info/version ("6.2.4-120" -> 6.2.4).
std::optional<Version> rocm_release_in(const std::string& text);

struct Interpreter {
  std::string path;
  PythonTag tag;
};

// What the host offers; `env` is the environment to read CUDA_HOME, CUDA_PATH_V*, PATH,
// PYENV_ROOT and HOME from (fabuild's own, in production). A Windows host (`windows`) is
// looked at as windows_host.h says: CUDA_PATH_V12_8, the py launcher, uv.
class HostProbe {
 public:
  HostProbe(CommandRunner& runner, HostToolchains toolchains, Environment env, bool windows = false);
  [[nodiscard]] bool windows() const { return windows_; }
  [[nodiscard]] const HostToolchains& toolchains() const { return toolchains_; }
  [[nodiscard]] const Environment& environment() const { return env_; }
  [[nodiscard]] CommandRunner& runner() const { return runner_; }
  // The messages for this host: missing_python's, or windows_host.h's on Windows.
  [[nodiscard]] std::string missing_python_here(const PythonTag& tag, const std::vector<Probe>& tried) const;

  // Looks in: toolchains/host.yaml, /usr/local/cuda-X.Y, $CUDA_HOME, $CUDA_PATH_VX_Y,
  // /usr/local/cuda; accepts the first whose `nvcc --version` says release X.Y.
  Probed<Toolkit> find_toolkit(const Version& cuda);
  // Looks in: toolchains/host.yaml, /opt/rocm-X.Y*, $ROCM_PATH, $ROCM_HOME, /opt/rocm; accepts
  // the first whose .info/version says X.Y and that has bin/hipcc.
  Probed<Toolkit> find_rocm(const Version& rocm);
  // Looks in: toolchains/host.yaml, python3.X on PATH, pyenv's versions (newest patch first),
  // uv's managed Pythons; accepts the first that runs and reports 3.X.
  Probed<Interpreter> find_python(const PythonTag& tag);

  // "no CUDA 12.8 toolkit: tried ... ; install it (e.g. to /usr/local/cuda-12.8) or name it in
  // toolchains/host.yaml", and what else could provide it: PyPI's packages (CUDA 13 and
  // later, unless `toolkit: host` ruled them out) or a container image (CUDA 12.x).
  static std::string missing_toolkit(const Version& cuda, const std::vector<Probe>& tried,
                                     ToolkitSource source = ToolkitSource::kHost);
  static std::string missing_rocm(const Version& rocm, const std::vector<Probe>& tried);
  static std::string missing_python(const PythonTag& tag, const std::vector<Probe>& tried);

 private:
  // What `nvcc --version` says, asked once per nvcc: its release (nullopt when none), its build
  // ("V13.0.88") and what a probe line says of it ("nvcc 13.0", "no /usr/local/cuda/bin/nvcc").
  struct NvccAnswer {
    std::optional<Version> version;
    std::string outcome;
    std::string build;
  };
  const NvccAnswer& nvcc_release(const std::string& nvcc);
  // The interpreter `python` runs, with its version: the executable it says it is (sys.executable)
  // when that exists, so that builds and later probes skip a launcher in front of it (a pyenv
  // shim costs ~0.5 s a start); else `python` itself. With what a probe line says of it.
  struct InterpreterAnswer {
    std::optional<Interpreter> found;
    std::string outcome;  // "python 3.12", "missing", "does not run (...)"
  };
  InterpreterAnswer interpreter_at(const std::string& python);
  std::string env(const std::string& name) const;

  CommandRunner& runner_;
  HostToolchains toolchains_;
  Environment env_;
  bool windows_ = false;
  std::map<std::string, NvccAnswer> nvcc_cache_;
};

}  // namespace fabuild
