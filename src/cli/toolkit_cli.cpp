#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "app/toolkit_command.h"
#include "cli/parse_subcommand.h"
#include "cli/report.h"
#include "cli/subcommands.h"
#include "cli/system.h"
#include "util/log.h"

namespace fabuild {

namespace {

constexpr const char* kDescription = R"(fabuild toolkit install: a CUDA toolkit from NVIDIA's packages on PyPI.

Installs nvidia-cuda-nvcc, nvidia-nvvm, nvidia-cuda-crt, nvidia-cuda-runtime and
nvidia-cuda-cccl of CUDA's major.minor (CUDA 13 and later: PyPI's 12.x packages carry ptxas
only) through pip's configured index into DIR/cuda-X.Y/ (default ~/.cache/fabuild/toolkits),
once per machine and under a lock. The toolkit is used only after its nvcc reports X.Y and
compiles a test kernel; until then it sits in a staging directory that a failure removes.
Prints its CUDA_HOME. A build does this itself for the cells whose toolkit comes from PyPI
(toolkit: auto or pip, docs/host-builds.md).
Exit codes: 0 installed (or already there), 1 the install failed, 2 a CUDA version PyPI has no
compiler for, or a wrong flag.)";

constexpr const char* kFooter = R"(
Examples:
  fabuild toolkit install 13.2
  export CUDA_HOME=$(fabuild toolkit install 13.0 --python python3.12))";

}  // namespace

int toolkit_main(int argc, char** argv) {
  CLI::App app{kDescription, "fabuild toolkit"};
  app.footer(kFooter);
  app.require_subcommand(1);
  ToolkitOptions options;
  CLI::App* install = app.add_subcommand("install", "Install a CUDA toolkit from PyPI (prints its CUDA_HOME)");
  install->add_option("CUDA", options.cuda, "The CUDA version, major.minor: 13.0, 13.2")->required();
  install->add_option("--python", options.python, "An interpreter with pip (default: python3 on PATH)");
  install->add_option("--dir", options.dir, "Where toolkits live (default: ~/.cache/fabuild/toolkits)");
  if (const auto done = parse_subcommand(app, argc, argv, "toolkit", "toolkit install")) return *done;
  init_logging(false, false);
  return report_errors(
      [&] { return static_cast<int>(toolkit_install_command(options, real_system(), std::cout, std::cerr)); });
}

}  // namespace fabuild
