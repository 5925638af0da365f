#pragma once

// CUDA toolkits made of NVIDIA's compiler packages on PyPI (CUDA 13 and later): nvcc, cudafe++,
// ptxas, nvlink and fatbinary (nvidia-cuda-nvcc), cicc (nvidia-nvvm), the runtime and its
// headers (nvidia-cuda-runtime, nvidia-cuda-crt) and CCCL (nvidia-cuda-cccl), each pinned to the
// CUDA set's minor version. They unpack into one nvidia/cu13/ tree, which is a CUDA_HOME once two
// links that build systems look for are added (lib64/ and lib/libcudart.so).
//
// One lives in <toolkits>/cuda-X.Y/ (toolkits: fabuild's cache): made once per machine, under
// a lock, in a staging directory that becomes cuda-X.Y/ in one rename only after its nvcc
// reported X.Y and compiled a kernel, so a half-installed toolkit is never used.

#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "provision/host.h"
#include "util/command.h"
#include "util/expected.h"
#include "util/version.h"

namespace fabuild {

struct PipToolkit {
  Version cuda;                // the CUDA set's toolkit; its major.minor picks the packages, a release
                               // ("13.0.1") NVIDIA's cuda-toolkit==13.0.1 and its own directory
  std::filesystem::path root;  // <fabuild cache>/toolkits

  [[nodiscard]] std::string name() const;  // "cuda-13.2"
  [[nodiscard]] std::filesystem::path dir() const;
  [[nodiscard]] std::filesystem::path cuda_home() const;  // dir/nvidia/cu13
  [[nodiscard]] std::filesystem::path nvcc() const;
  // "nvidia-cuda-nvcc==13.2.*", ...
  [[nodiscard]] std::vector<std::string> requirements() const;
};

// What its marker file says of a completed install, nullopt when there is none (never made,
// or a damaged marker: installing again replaces it).
std::optional<Toolkit> installed_pip_toolkit(const PipToolkit& toolkit);

// How the install goes: `python` has pip; `env` ("K=V") is pip's and nvcc's environment (PATH
// with a host C++ compiler, HOME for pip's cache, PIP_* for its index); the rest are limits a
// test may lower.
struct PipToolkitInstall {
  std::string python;
  std::vector<std::string> env;
  std::chrono::milliseconds pip_timeout{std::chrono::minutes(30)};
  std::chrono::milliseconds check_timeout{std::chrono::minutes(5)};
  std::uint64_t min_free_bytes = 1'000'000'000;  // ~310 MB installed, plus pip's unpacking
};

// Installs `toolkit` unless an earlier run did, and returns it; says what it does on `log`.
// A Failure says what failed, with pip's or nvcc's last lines and what to do; whatever it made
// is removed first.
[[nodiscard]] Expected<Toolkit> install_pip_toolkit(const PipToolkit& toolkit, const PipToolkitInstall& how,
                                                    CommandRunner& runner, std::ostream& log);

}  // namespace fabuild
