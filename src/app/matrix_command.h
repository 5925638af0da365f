#pragma once

#include <ostream>

#include "app/options.h"
#include "app/system.h"
#include "util/exit_code.h"

namespace fabuild {

// The `fabuild MATRIX` command: plan, then print it (--dry-run, --list) or build it.
// Returns the exit code; UserErrors propagate to main.
ExitCode matrix_command(const Options& options, const System& system, std::ostream& out);

}  // namespace fabuild
