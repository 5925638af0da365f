#pragma once

// A cell with a `command:` is trusted no more than a host build: the wheel it leaves in {out}
// is verified against the cell (name, METADATA, WHEEL tags, RECORD; wheel/verify.h) and filed
// with SHA256SUMS and a manifest entry (wheel/filing.h) by the step made here. A wheel that
// fails verification fails the cell and is never filed. Its other outputs are filed as they
// are by the engine (engine/staging.h).

#include <memory>
#include <string>

#include "app/plan.h"
#include "engine/runner.h"
#include "util/files.h"

namespace fabuild {

// Adds to `run` (whose steps run the command) the step that verifies and files its wheel, which
// it finds in the staging directory through `files` (the System's).
void add_command_wheel_filing(CellRun& run, const PlannedCell& p, const std::string& wheelhouse,
                              std::shared_ptr<const Files> files);

}  // namespace fabuild
