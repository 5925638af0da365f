#pragma once

// What a wheel's build record (wheel/build_record.h) says that filing alone does not know: made
// in two parts, as the facts arrive. When the cell is planned: fabuild (its version and the
// SHA-256 of its executable), the matrix cell, its source as the matrix names it, the variables
// its build gets and the CI run. When it is filed: what its steps found (the commit a clone
// checked out, the SHA-256 of a pip-fetched sdist, SOURCE_DATE_EPOCH, the remote's writers and
// their signing keys).

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app/plan.h"
#include "app/source_epoch.h"
#include "engine/facts.h"
#include "util/environment.h"

namespace fabuild {

inline constexpr const char* kFactSourceSha256 = "source_sha256";           // a pip-fetched sdist's
inline constexpr const char* kFactSourceTreeSha256 = "source_tree_sha256";  // a directory source's copy

struct FabuildIdentity {
  std::string version;
  std::string sha256;  // of the executable that built it; "" when it could not be read
};
// This fabuild's: its version and the SHA-256 of `self` (System::self; "" when unknown).
FabuildIdentity fabuild_identity(const std::filesystem::path& self);

// `epoch`: the source directory's (a path source, an unpacked sdist); nullopt when a step fetches
// the source. `user_epoch`: SOURCE_DATE_EPOCH from fabuild's own environment, when set.
nlohmann::json planned_build_record(const Plan& plan, const PlannedCell& cell, const SourceSpec& source,
                                    const std::optional<SourceEpoch>& epoch,
                                    const std::optional<std::string>& user_epoch, const Environment& env,
                                    const FabuildIdentity& self);

// The record's text for the manifest (FiledWheel::build): `planned` completed from the cell's facts.
std::string completed_build_record(nlohmann::json planned, const Facts& facts);

}  // namespace fabuild
