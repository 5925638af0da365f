#pragma once

// provision: container — the site a cell builds in is a container of the first image of its
// CUDA set's candidates that is present or pulls; the toolkit and the Python are checked in
// that image before any cell starts. Each cell (and each Python environment to make) gets a
// container of its own, started as its first step, entered for every process step, and
// removed when it ends, whatever the outcome (docs/containers.md).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/plan.h"
#include "app/site.h"
#include "engine/runner.h"
#include "util/files.h"

namespace fabuild {

class ContainerSites {
 public:
  // `host` finds a host toolkit to mount (container: {toolkit: host}); `engine_env` is the
  // engine client's environment; `files` (the System's) makes the environments' directory.
  ContainerSites(const Plan& plan, std::shared_ptr<CommandRunner> runner, HostProbe& host,
                 std::vector<std::string> engine_env, Files& files);
  ~ContainerSites();
  ContainerSites(const ContainerSites&) = delete;
  ContainerSites& operator=(const ContainerSites&) = delete;

  // The site of a container cell, or the step that failed ("engine", "image", "toolkit",
  // "python") and why.
  SiteResult site_for(const PlannedCell& p);
  // One line per image chosen, with what was tried before it.
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

 private:
  CommandRunner& probe_runner(const Image& image, const std::vector<Mount>& mounts);
  // Each looked for once; a Failure names the step the cell fails at.
  Expected<const ContainerEngine*> engine();
  const Expected<Image>& image_for(const Cell& cell, const ToolchainPlan& toolchain, const ContainerEngine& engine);
  Expected<Toolkit> toolkit_in(const Image& image, CommandRunner& probe, const Cell& cell,
                               const std::string& cuda_home);
  Expected<Interpreter> python_in(const Image& image, CommandRunner& probe, const Cell& cell,
                                  const std::string& python);
  const std::string& compiler_in(const Image& image, CommandRunner& probe);
  // The answer kept under `key` (image id + what was asked), asked once.
  const Expected<std::string>& asked(const std::string& key, const std::function<Expected<std::string>()>& ask);

  const Plan& plan_;
  std::shared_ptr<CommandRunner> runner_;
  HostProbe& host_;
  std::vector<std::string> engine_env_;
  Files& files_;
  std::string run_id_;
  std::optional<Expected<ContainerEngine>> engine_;      // looked for once, at the first container cell
  std::map<std::string, Expected<Image>> images_;        // by candidate list
  std::map<std::string, Expected<std::string>> checks_;  // by image id + what: the nvcc version, the interpreter
  std::map<std::string, std::string> compilers_;         // by image id
  std::map<std::string, std::unique_ptr<CommandRunner>> runners_;
  std::vector<std::string> notes_;
};

// Makes `run` run in a container of `place`: it first makes HOME in its staging directory and
// starts its container (memory and cores from the cell's share of the budget), then runs its
// process steps in it, and removes it when it ends. `mounts` are the run's own (its staging
// directory is always mounted, read-write, at its own path). `files` (the System's) makes HOME.
void run_in_container(CellRun& run, const ContainerPlace& place, std::vector<Mount> mounts,
                      std::shared_ptr<Files> files);

}  // namespace fabuild
