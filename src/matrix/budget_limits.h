#pragma once

// The numbers each budget setting takes (matrix/spec.h's BudgetSpec), one table for the matrix's
// `budget:` (loader_entries.cpp) and the flags that override it (cli.cpp): past `most` is a
// typo, not a machine.

#include <string_view>

#include "util/number_range.h"

namespace fabuild {

struct BudgetLimit {
  std::string_view key;   // under `budget:`
  std::string_view flag;  // "" when no flag overrides it
  NumberRange range;
};
inline constexpr BudgetLimit kBudgetLimits[] = {
    {"cores", "--cores", {0.1, 65536}},
    {"memory_gb", "--memory-gb", {0.1, 1 << 20}},  // a PiB
    {"reserve_gb", "", {0, 1 << 20}},
    {"jobs", "-j", {1, 100000, true}},
};
// The row of `key`; one of kBudgetLimits' keys.
constexpr const BudgetLimit& budget_limit(std::string_view key) {
  for (const BudgetLimit& limit : kBudgetLimits) {
    if (limit.key == key) return limit;
  }
  return kBudgetLimits[0];  // never: every caller names a row
}

}  // namespace fabuild
