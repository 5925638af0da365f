#pragma once

// What a cell's steps find out as they go, for the steps after them and for its record: torch's
// version (the torch check), the C++ entry points of its library (the export check), the
// moment its source was ready (the build time in the manifest), its compiles through the object
// cache. In-process steps write them through their StepContext; a process step reports them as
// lines of its output:
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
