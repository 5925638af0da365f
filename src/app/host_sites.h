#pragma once

// provision: host — what this machine offers a cell, looked for once per run and kept: the
// toolkit of each CUDA set (or ROCm set), the interpreter of each Python tag, the C++ compiler,
// and on Windows the Visual Studio environment of each toolset (docs/host-builds.md).

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/msvc_capture.h"
#include "app/plan.h"
#include "app/site.h"
#include "provision/host.h"
#include "provision/toolkit_choice.h"
#include "util/command.h"
#include "util/environment.h"
#include "util/files.h"

namespace fabuild {

class HostSites {
 public:
  // `env` is fabuild's environment; `runner` answers the probes (nvcc --version, ...); `files`
  // marks the cache entries a site uses (System's).
  HostSites(const Plan& plan, const Environment& env, CommandRunner& runner, Files& files, bool windows);

  // The site of a host cell, or the step that failed ("toolkit", "python", "msvc") and why.
  SiteResult site_for(const Cell& cell);
  // The site of a cell whose filed wheel is only checked (docs/stable-abi.md): its interpreter
  // and where environments live; no toolkit, compiler or Visual Studio is looked for.
  SiteResult python_site(const Cell& cell);
  // A CUDA cell's toolkit, decided once per CUDA set and source (toolkit_choice.h); one from
  // fabuild's toolkit cache is marked used (util/entry_cache.h), once.
  const ToolkitChoice& toolkit_for(const Cell& cell);
  // The C++ compiler the build finds on PATH (torch's extension builder uses `c++` unless CXX
  // says otherwise), as its first --version line.
  const std::string& compiler_version();
  HostProbe& probe() { return probe_; }

 private:
  // HostProbe's answers, kept by ROCm set and by Python tag.
  const Probed<Toolkit>& find_rocm(const GpuSet& set);
  const Probed<Interpreter>& find_python(const PythonTag& tag);

  const Plan& plan_;
  const Environment& env_;
  CommandRunner& runner_;
  Files& files_;
  HostProbe probe_;
  MsvcCaptures msvc_{probe_, plan_.cache_root};
  std::map<std::string, Probed<Toolkit>> rocms_;        // by "rocm6.2"
  std::map<std::string, ToolkitChoice> toolkits_;       // by "12.8|auto"
  std::map<std::string, Probed<Interpreter>> pythons_;  // by "cp312"
  std::optional<std::string> compiler_;
};

}  // namespace fabuild
