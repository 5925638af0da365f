#pragma once

// What a win_amd64 cell builds with on a Windows host: Visual Studio's vcvarsall.bat (found by
// vswhere), the CUDA toolkit (NVIDIA's installer sets CUDA_PATH_V12_8 and CUDA_PATH), and the
// Python (the py launcher, or uv). Every place looked at is recorded as a Probe, so that a
// missing piece is an error naming what was tried and what to install. The questions go
// through a CommandRunner and paths through std::filesystem only: nothing here calls Windows
// itself, and the tests run it on Linux with fake answers.

#include <optional>
#include <string>
#include <vector>

#include "provision/host.h"
#include "util/command.h"
#include "util/environment.h"

namespace fabuild {

// The variables that name CUDA X.Y's directory: NVIDIA's installer sets CUDA_PATH_V12_6; the
// Windows manual build FlashAttention users follow sets CUDA_PATH_V126. NVIDIA's first.
std::vector<std::string> cuda_path_variables(const Version& cuda);

// vswhere's arguments: the newest installation of any product that has the x64 C++ tools.
std::vector<std::string> vswhere_args();

// The vcvarsall.bat to capture: toolchains/host.yaml's msvc.vcvarsall, else the installation
// vswhere names (%ProgramFiles(x86)%\Microsoft Visual Studio\Installer\vswhere.exe, then
// vswhere.exe on PATH) + VC\Auxiliary\Build\vcvarsall.bat.
Probed<std::string> find_vcvarsall(CommandRunner& runner, const HostToolchains& toolchains, const Environment& env);

// The -vcvars_ver a CUDA set builds with: msvc.toolsets[cuda], else msvc.toolset, else ""
// (vcvarsall.bat's default, the newest installed). Older CUDA releases reject newer MSVC.
std::string msvc_toolset_for(const HostToolchains& toolchains, const Version& cuda);

// Looks in: toolchains/host.yaml, %CUDA_PATH_V12_8% (for CUDA 12.8), %CUDA_PATH%,
// %ProgramFiles%\NVIDIA GPU Computing Toolkit\CUDA\v12.8; accepts the first whose
// bin\nvcc.exe --version says release 12.8.
Probed<Toolkit> find_windows_cuda(CommandRunner& runner, const HostToolchains& toolchains, const Environment& env,
                                  const Version& cuda);

// Looks in: toolchains/host.yaml, the py launcher (`py -3.12`), uv (`uv python find 3.12`),
// python.exe on PATH; accepts the first that runs and reports 3.12, as the executable it names
// (sys.executable), so that builds start the interpreter rather than a launcher.
Probed<Interpreter> find_windows_python(CommandRunner& runner, const HostToolchains& toolchains, const Environment& env,
                                        const PythonTag& tag);

std::string missing_vcvarsall(const std::vector<Probe>& tried);
std::string missing_windows_cuda(const Version& cuda, const std::vector<Probe>& tried);
std::string missing_windows_python(const PythonTag& tag, const std::vector<Probe>& tried);

}  // namespace fabuild
