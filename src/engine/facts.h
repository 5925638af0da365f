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
// earlier one.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace fabuild {

using Facts = std::map<std::string, std::string>;

inline constexpr std::string_view kFactPrefix = "fabuild-fact: ";

// The facts in `output` (a step's part of the log), added to `facts`; other lines are ignored.
void read_facts(std::string_view output, Facts& facts);

// A fact as the line a process prints for it.
std::string fact_line(const std::string& name, const std::string& value);

// The fact's value, or nullopt.
std::optional<std::string> fact(const Facts& facts, const std::string& name);

}  // namespace fabuild
