#pragma once

// A cell's own command (`command:` in the matrix): an argv whose arguments may hold
// placeholders, each replaced by one cell value. Arguments stay arguments: no shell ever
// sees them, so spaces, quotes or `$(...)` in a value are just characters.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabuild {

// {id} {version} {torch} {cuda} {python} {platform} {archs} {label} {out} {max_jobs} {nvcc_threads}
std::vector<std::string> command_placeholders();

// The first {name} in `arg` that is not a placeholder; "{{" and "}}" are literal braces.
std::optional<std::string> unknown_placeholder(const std::string& arg);

// Each {name} replaced by values.at(name).
std::string expand_placeholders(const std::string& arg, const std::map<std::string, std::string>& values);

}  // namespace fabuild
