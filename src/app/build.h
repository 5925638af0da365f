#pragma once

#include <ostream>

#include "app/plan.h"
#include "app/system.h"
#include "util/exit_code.h"

namespace fabuild {

// Runs the plan's cells under its budget and prints their progress and a summary.
ExitCode build(const Plan& plan, const Options& options, const System& system, std::ostream& out);

}  // namespace fabuild
