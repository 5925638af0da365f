#include "app/toolkit_command.h"

#include <fmt/format.h>

#include "matrix/values.h"
#include "provision/pip_toolkit.h"
#include "util/error.h"

namespace fabuild {

ExitCode toolkit_install_command(const ToolkitOptions& options, const System& system, std::ostream& out,
                                 std::ostream& log) {
  const auto cuda = parse_cuda_version(options.cuda);
  if (!cuda) {
    throw UserError(kExitBadConfig, Location{}, fmt::format("'{}' is not a CUDA version", options.cuda),
                    "write major.minor, e.g. fabuild toolkit install 13.0");
  }
  if (!pip_has_cuda_compiler(*cuda)) {
    throw UserError(
        kExitBadConfig, Location{},
        fmt::format("PyPI has no CUDA {} compiler: its {}.x packages carry ptxas only", cuda->str(), cuda->major()),
        fmt::format("install CUDA {} on the host (e.g. to /usr/local/cuda-{}), or build in a container", cuda->str(),
                    cuda->str()));
  }
  PipToolkitInstall how;
  how.python = options.python.empty() ? "python3" : options.python;
  // pip and nvcc get this process's whole environment: PATH (a host compiler), HOME (pip's
  // cache), PIP_* (its index), proxies and TLS trust.
  how.env = system.env.entries();
  const PipToolkit toolkit{*cuda,
                           options.dir.empty() ? system.cache_dir() / "toolkits" : std::filesystem::path(options.dir)};
  const Expected<Toolkit> installed = install_pip_toolkit(toolkit, how, *system.commands, log);
  if (!installed) {
    throw UserError(kExitCellFailed, Location{toolkit.dir().string()}, installed.error().what, installed.error().hint);
  }
  out << installed->home << "\n";
  return kExitOk;
}

}  // namespace fabuild
