#pragma once

// What the app layer reaches of the world outside fabuild, made once by `cli`
// (cli/system.cpp: the composition root) and handed down: app starts no process supervisor,
// reads no environment variable, asks no terminal and finds no directory by itself, and what it
// does to files itself goes through `files` (the few calls still direct: docs/architecture.md,
// "One cell"). Its tests give it fakes, as ninja tests its Builder with a fake CommandRunner and
// a virtual file system (tests/app/).

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "remote/guard.h"
#include "remote/store.h"
#include "util/clock.h"
#include "util/command.h"
#include "util/environment.h"
#include "util/expected.h"
#include "util/files.h"
#include "util/process.h"
#include "util/processes.h"
#include "util/resources.h"

namespace fabuild {

struct System {
  Environment env;  // fabuild's own
  // A supervisor for one run of cells (util/process.h); it owns the signal handling meanwhile.
  std::function<std::unique_ptr<ProcessSupervisor>()> make_supervisor;
  std::shared_ptr<CommandRunner> commands;  // short questions: nvcc --version, python probes
  // The files and directories app reads, writes, renames, removes and marks used itself
  // (util/files.h); the lower layers' own files (wheel/filing, source/archive, ...) are theirs.
  std::shared_ptr<Files> files;
  bool stdout_is_terminal = false;  // a live status line, or one line per event
  // fabuild's cache: environments, toolkits, objects, sources, downloads. Asked when needed:
  // throws UserError when the environment names none (no HOME).
  std::function<std::filesystem::path()> cache_dir;
  std::string self;                       // fabuild's own executable, to start as a helper process
  std::function<Resources()> machine;     // cores and memory, for the budget
  std::string platform = "linux_x86_64";  // the wheel platform this machine builds natively (uname -m)
  std::function<std::string()> utc_now;   // "2026-11-23T22:05:00Z"
  // The steady clock: a build's elapsed time, and the origin its cells' start times count from
  // (the runner's own clock is std::chrono::steady_clock: a test's clock stays near it).
  SteadyNow steady_now;
  // Ends the processes of a run that died, found by a variable in their environment
  // (util/processes.h): the wheelhouse's recovery and a claimed cache entry's.
  KillTagged kill_tagged;
  // Seconds since the CI job this run is part of started, from FABUILD_JOB_STARTED (seconds since
  // 1970, which the job's first step sets: docs/ci.md); none outside a CI job (costs/job_setup.h).
  std::function<std::optional<double>()> job_elapsed_s;
  // The object cache's remote tier at a URL (http(s):// or redis://), with a token ("" = none):
  // remote/store.h, behind its guard (remote/guard.h): one per address and token for the whole
  // run, so that the plan and the build count its failures together. A Failure when this fabuild
  // cannot speak to it (built without Redis).
  std::function<Expected<std::shared_ptr<remote::GuardedStore>>(const std::string& url, const std::string& token)>
      open_remote;
};

}  // namespace fabuild
