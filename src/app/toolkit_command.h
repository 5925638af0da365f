#pragma once

// `fabuild toolkit install CUDA`: a CUDA toolkit from NVIDIA's packages on PyPI, installed
// into fabuild's cache (provision/pip_toolkit.h) for builds to use, or for a CI step to
// install (and cache) ahead of them. A build starts it as a process of its own for each toolkit
// its cells need.

#include <ostream>
#include <string>

#include "app/system.h"
#include "util/exit_code.h"

namespace fabuild {

struct ToolkitOptions {
  std::string cuda;    // "13.2"
  std::string python;  // an interpreter with pip; "" = python3 on PATH
  std::string dir;     // where toolkits live; "" = <fabuild cache>/toolkits
};

// Installs it unless it is there; writes its CUDA_HOME as the last line of `out` and what it
// does to `log`. UserError: 2 for a CUDA version PyPI has no compiler for, 1 when the install
// fails.
ExitCode toolkit_install_command(const ToolkitOptions& options, const System& system, std::ostream& out,
                                 std::ostream& log);

}  // namespace fabuild
