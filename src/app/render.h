#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "app/plan.h"
#include "util/files.h"

namespace fabuild {

// --dry-run: the plan a person reads; `details` adds every cell in full. `files` (System's) says
// which toolchain files are there.
void print_plan(const Plan& plan, const Files& files, std::ostream& out, bool details);
// --list: one line per cell.
void print_cell_table(const Plan& plan, std::ostream& out);

// One object per cell (--list --format json), and the whole plan (--dry-run --format json).
nlohmann::ordered_json cell_json(const Plan& plan, const PlannedCell& cell);
nlohmann::ordered_json plan_json(const Plan& plan);

}  // namespace fabuild
