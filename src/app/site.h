#pragma once

// Where one cell's processes run and what they find there: this machine (provision: host) or
// a container of an image (provision: container). The build steps are the same for both
// (site_build.cpp); a container site adds how to start, enter and remove the container
// (container_site.h). Paths in a site are valid where the processes run: a container sees the
// host directories it needs mounted at the same paths.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "provision/container.h"
#include "provision/host.h"
#include "util/command.h"
#include "util/expected.h"

namespace fabuild {

struct ContainerPlace {
  ContainerEngine engine;
  Image image;
  std::string network;                      // "" = the engine's default
  std::vector<Mount> mounts;                // every container of this site has these (a host toolkit)
  std::vector<std::string> engine_env;      // the engine client's environment ("K=V")
  std::string run_id;                       // names its containers fabuild-<run>-<cell>
  std::shared_ptr<CommandRunner> commands;  // asks the engine, here: removing a cell's container
};

struct Site {
  Toolkit toolkit;
  Interpreter python;
  std::string venv_root;            // where its virtualenvs live (a host directory)
  std::string path_tail;            // PATH after the toolkit's and the environment's bin directories
  char path_separator = ':';        // ';' on a Windows host
  EnvList env;                      // what every process there gets besides: a Windows host's MSVC environment
  std::string compiler;             // the first line of `c++ --version` there
  CommandRunner* runner = nullptr;  // asks questions there (which torch an interpreter has)
  std::string torch_key;            // distinguishes interpreters of different sites with one path
  std::optional<ContainerPlace> container;
};

// A cell's site, or why it has none: the Failure's step is the step the cell fails at
// ("toolkit", "python", "msvc", "engine", "image"), its message() the why on the FAILED line.
using SiteResult = Expected<Site>;

inline tl::unexpected<Failure> no_site(std::string step, std::string why, std::string hint = {}) {
  return tl::make_unexpected(Failure{std::move(why), std::move(hint), std::move(step)});
}

}  // namespace fabuild
