#pragma once

// Whether a cell need not be built: its wheel is filed, with the patches it has now, and still
// the file that was verified (a stamp, app/verified_stamps.h) or verifies again. And the
// outcome of a cell settled before it runs (up to date, or failed at planning).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/plan.h"
#include "app/verified_stamps.h"
#include "engine/runner.h"
#include "wheel/manifest.h"

namespace fabuild {

CellOutcome settled(const PlannedCell& p, CellResult result, const std::string& step, const std::string& message);

// What a cell's wheel must hold besides its package: its compiled module.
std::vector<std::string> required_members(const Cell& cell);

// The cell's outcome when its filed wheel is up to date; nullopt when it must be built, with a
// note saying why when it was filed before (patches changed, wheel gone, changed or not verifying).
// A wheel verified just now is stamped in `stamps`. `manifest` is the wheelhouse's, read once
// for all its cells (wheel/manifest.h's read_manifest).
std::optional<CellOutcome> filed_and_intact(const PlannedCell& p, const std::string& wheelhouse,
                                            const std::map<std::string, FiledWheel>& manifest, VerifiedStamps& stamps,
                                            std::vector<std::string>& notes);

// The same for a library cell: its archive is filed, with the patches it has now, with the size
// and sha256 the manifest recorded (its checks ran before it was filed; a re-run reads it whole).
std::optional<CellOutcome> library_filed_and_intact(const PlannedCell& p, const std::string& wheelhouse,
                                                    const std::map<std::string, FiledWheel>& manifest,
                                                    std::vector<std::string>& notes);

}  // namespace fabuild
