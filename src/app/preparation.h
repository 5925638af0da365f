#pragma once

// The runs a build makes before its cells (app/build.cpp runs them first): a Python environment
// per interpreter x torch x CUDA build, and a CUDA toolkit from PyPI. Both are entries of caches
// that other fabuild processes share: an environment run claims its entry (engine/runner.h,
// EntryClaim), so one process makes it while the others wait and then use it; a toolkit's
// install takes the same lock itself (`fabuild toolkit install`, provision/pip_toolkit.h).

#include <memory>
#include <string>

#include "app/site.h"
#include "engine/runner.h"
#include "provision/pip_toolkit.h"
#include "provision/python_env.h"
#include "util/files.h"
#include "util/processes.h"

namespace fabuild {

// What the runs need of the build.
struct Preparing {
  std::string wheelhouse;        // its logs/ and .staging/
  std::string matrix_file;       // named to those who wait for an entry this run makes
  std::string check_stamps;      // where a host interpreter's torch check keeps its stamps
  std::string torch_index;       // an absolute directory is mounted into a container
  std::string self;              // this fabuild, for `fabuild toolkit install`
  std::shared_ptr<Files> files;  // the System's: what a run's in-process steps write in its log
  KillTagged kill_tagged;        // the System's: ends what a maker that died left running
};

// The run that makes `env` (its setup commands, then the torch check) on `site`, as `id`.
CellRun environment_run(const std::string& id, const PythonEnv& env, const Site& site, const Preparing& build);

// The run that installs `toolkit` with `python`'s pip; its id is "toolkit-cuda-X.Y".
CellRun toolkit_install_run(const PipToolkit& toolkit, const Interpreter& python, const Preparing& build);

}  // namespace fabuild
