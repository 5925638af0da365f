#pragma once

// `fabuild MATRIX --rebuild-check -o WHEELHOUSE` (docs/security.md, "Reproducible wheels"): each
// selected cell the wheelhouse has filed is built again from the same matrix, into
// WHEELHOUSE/.rebuild-check/ with an object cache of its own and no remote, so that every unit
// compiles anew; its wheel is then compared with the filed one. Per cell: the same bytes, or
// which members differ (by their sha256), or that only the zip around them does. The rebuilt
// wheels stay in .rebuild-check/ for a closer look. Exit 0 when every rebuilt wheel is the
// filed one byte for byte, 1 when one differs or failed to build, 3 when no selected cell is filed.

#include <ostream>

#include "app/options.h"
#include "app/plan.h"
#include "app/system.h"
#include "util/exit_code.h"

namespace fabuild {

inline constexpr const char* kRebuildCheckDir = ".rebuild-check";

ExitCode rebuild_check(Plan plan, Options options, const System& system, std::ostream& out);

}  // namespace fabuild
