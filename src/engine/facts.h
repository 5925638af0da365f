#pragma once

// What a cell's steps find out as text, for the steps after them and for its outcome: torch's
// version (the torch check), what the remote cache took and sent, what a compile share did.
// Values that in-process steps hand each other, the steps share themselves (the app's
// CellFindings); facts are what a process says, and what leaves the run in the cell's outcome.
// In-process steps write them through their StepContext; a process step reports them as lines
// of its output (read from its own output: runner.h's Step::reports_facts):
//
//   fabuild-fact: torch_version=2.11.0+cu130
//
// Names are lower_snake_case; a value is one line. A later fact of the same name replaces an
// earlier one. A fact named "env:NAME" is also a variable: the cell's later process steps get
// NAME set to its value (the source's SOURCE_DATE_EPOCH, known once the source is fetched).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabuild {

using Facts = std::map<std::string, std::string>;

inline constexpr std::string_view kFactPrefix = "fabuild-fact: ";

// The facts in `output` (a step's part of the log), added to `facts`; other lines are ignored.
void read_facts(std::string_view output, Facts& facts);

// A fact as the line a process prints for it.
std::string fact_line(const std::string& name, const std::string& value);

// The fact's value, or nullopt.
std::optional<std::string> fact(const Facts& facts, const std::string& name);

inline constexpr std::string_view kEnvFactPrefix = "env:";
// The variables the "env:NAME" facts set, in name order.
std::vector<std::pair<std::string, std::string>> env_of_facts(const Facts& facts);

}  // namespace fabuild
