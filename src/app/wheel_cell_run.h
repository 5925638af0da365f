#pragma once

// A wheel cell's run, once its site, Python environment and source are settled (site_build.cpp):
// the torch check, the source's steps, the compile (through the object cache, with its remote's
// fetch and push where they are on; a compile share ends there), then the wheel's checks, its
// GPU code, exports, sweep, the object cache's probation and the filing. The steps run in this
// order (docs/architecture.md, "One cell, through the layers").

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app/build_records.h"
#include "app/object_cache.h"
#include "app/plan.h"
#include "app/site.h"
#include "app/source_epoch.h"
#include "app/sweep_steps.h"
#include "app/system.h"
#include "costs/job_setup.h"
#include "engine/runner.h"
#include "provision/python_env.h"
#include "provision/toolkit_choice.h"
#include "remote/signing.h"
#include "remote/store.h"

namespace fabuild {

// What the run's planner holds for every wheel cell.
struct WheelRunContext {
  const Plan& plan;
  const System& system;
  const CcWrapper* wrapper;               // null: the object cache is off
  std::shared_ptr<remote::Store> remote;  // null: no remote tier
  std::shared_ptr<const remote::IndexTrust> trust;
  std::shared_ptr<JobSetups> job_setups;  // each row's setup in a CI job, for its record
  std::string check_stamps;               // where the torch check keeps its stamps for this site
  FabuildIdentity self;                   // for the build record
};

// One wheel cell as the planner settled it.
struct WheelCell {
  const PlannedCell& p;
  const Site& site;
  const PythonEnv& env;
  const std::filesystem::path& source;   // the tree to copy; empty: the cell fetches it (pip, git)
  const ToolkitChoice* choice;           // a host cell's toolkit choice; null in a container
  const std::vector<SweepTorch>& sweep;  // the environments its wheel is checked in besides its own
};

struct WheelRun {
  CellRun run;
  std::shared_ptr<CellCompiles> compiles;  // its compiles through the object cache; null without it
};

// `epochs` gives the wheel's zip times from its source (app/source_epoch.h), read once a tree.
WheelRun wheel_cell_run(const WheelRunContext& context, const WheelCell& cell, SourceEpochs& epochs);

}  // namespace fabuild
