#pragma once

// The Visual Studio environment of a Windows host's cells (provision/msvc_env.h): vcvarsall.bat
// found once (windows_host.h), captured once per toolset and shared by every cell whose CUDA
// set builds with that toolset. The plan shows it (--dry-run; -v lists what it sets); the
// build gives it to each cell's processes.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/plan.h"
#include "app/site.h"
#include "provision/host.h"
#include "provision/msvc_env.h"

namespace fabuild {

class MsvcCaptures {
 public:
  // `probe`: a Windows host's (its runner, toolchains and fabuild's environment);
  // `cache_root`: fabuild's cache, where captures are kept (msvc/).
  MsvcCaptures(HostProbe& probe, std::filesystem::path cache_root);

  // The capture a CUDA set's cells build in, or why there is none (what was tried, what to do).
  const Expected<MsvcEnvironment>& for_cuda(const Version& cuda);

 private:
  HostProbe& probe_;
  std::filesystem::path cache_root_;
  std::optional<Expected<std::string>> vcvarsall_;
  std::map<std::string, Expected<MsvcEnvironment>> by_toolset_;
};

// Captures, for each CUDA set of the plan's host cells that fabuild builds for win_amd64, the
// environment its cells build in (plan.msvc).
void resolve_msvc(Plan& plan, MsvcCaptures& captures);

// For the plan: a line per CUDA set ("msvc: CUDA 12.8: C:\...\vcvarsall.bat x64, VS 17.14.4,
// tools 14.44.35207 (cached): 27 variables"), and with `details` what each sets or changes.
std::vector<std::string> msvc_plan_lines(const Plan& plan, bool details);

// The variables a cell's processes get from a capture, on top of fabuild's environment `own`:
// each variable vcvarsall.bat set, at its value there (PATH included).
EnvList msvc_cell_env(const MsvcEnvironment& msvc, const Environment& own);

// A Windows host site takes from a capture the variables (all but PATH), the PATH that
// follows the toolkit's and the Python environment's directories (';'-separated), and the
// compiler it names ("MSVC 14.44.35207 (Visual Studio 17.14.4)").
void use_msvc(Site& site, const MsvcEnvironment& msvc, const Environment& own);

}  // namespace fabuild
