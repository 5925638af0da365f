#include "provision/toolkit_choice.h"

#include <fmt/format.h>

#include "provision/windows_host.h"
#include "util/text.h"

namespace fabuild {

std::string ToolkitChoice::describe() const {
  if (install) {
    return fmt::format("PyPI: {} into {}, before the first cell", join(install->requirements(), " "),
                       install->dir().string());
  }
  if (!toolkit) return "none: " + toolkit.error().what;
  const std::string build = toolkit->build.empty() ? toolkit->version.str() : toolkit->build;
  if (toolkit->origin == "pip") return fmt::format("PyPI, installed in {} (nvcc {})", toolkit->home, build);
  return fmt::format("host {} (nvcc {})", toolkit->home, build);
}

ToolkitChoice choose_toolkit(HostProbe& probe, const Version& cuda, ToolkitSource source,
                             const std::filesystem::path& root) {
  ToolkitChoice choice;
  if (source != ToolkitSource::kPip) {
    Probed<Toolkit> host = probe.find_toolkit(cuda);
    choice.tried = std::move(host.tried);
    if (host.found) {
      choice.toolkit = std::move(*host.found);
      return choice;
    }
  }
  if (probe.windows()) {
    // PyPI's toolkits are laid out and checked by fabuild on Linux only (pip_toolkit.h).
    const std::string missing = missing_windows_cuda(cuda, choice.tried);
    choice.toolkit =
        fail(source == ToolkitSource::kPip
                 ? fmt::format("toolkit: pip: fabuild installs CUDA from PyPI on Linux hosts only; {}", missing)
                 : missing);
    return choice;
  }
  if (source == ToolkitSource::kHost || !pip_has_cuda_compiler(cuda)) {
    choice.toolkit = fail(HostProbe::missing_toolkit(cuda, choice.tried, source));
    return choice;
  }
  const PipToolkit pip{cuda, root};
  if (auto installed = installed_pip_toolkit(pip)) {
    choice.toolkit = std::move(*installed);
  } else {
    choice.install = pip;
    choice.toolkit = Toolkit{pip.cuda_home().string(), pip.nvcc().string(), cuda, "pip", ""};
  }
  return choice;
}

}  // namespace fabuild
