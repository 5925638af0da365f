#pragma once

// The run records (report.json) of partial wheelhouses as one: the record of the CI run they
// were the jobs of, for OUT's page and summary.md after `fabuild merge`.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "publish/run_record.h"

namespace fabuild {

// Every part's cells in one record: start times moved onto the earliest part's clock, the
// budgets added up (the parts ran side by side on their own machines), the worst exit code.
// A cell in several records keeps the one that built it, else the first. nullopt when no part
// has a record; a record that cannot be read is left out with a warning.
std::optional<RunRecord> merged_run_record(const std::vector<std::filesystem::path>& parts,
                                           std::vector<std::string>& warnings);

}  // namespace fabuild
