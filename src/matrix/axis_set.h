#pragma once
// --set AXIS=VALUES: an axis of the matrix replaced for one run (docs/matrix.md, "Axes from the
// command line"), read like the file's own value of that key.

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "matrix/yaml_read.h"

namespace fabuild {

struct AxisSet {
  std::string axis;                 // the matrix key: versions, torch, cuda, python, ...
  std::vector<std::string> values;  // as given, comma-separated on the command line
  std::string text;                 // "torch=2.12,2.13", as given
  [[nodiscard]] std::string flag() const { return "--set " + text; }
};

// The keys --set replaces, as the matrix spells them.
const std::vector<std::string>& settable_axes();

// Parses "AXIS=VALUES". `fa` and `version` are read as `versions` (the --fa filter's name).
// A malformed text, an axis --set does not replace or an empty value is a config_error (exit 2)
// naming the flag.
AxisSet parse_axis_set(const std::string& text);

// Each set's axis of `root` replaced by its values; returns the new nodes with the flag that
// made them, for the Reader to locate what it reads from them. Two sets of one axis are an error.
std::vector<yaml::Reader::Origin> apply_axis_sets(YAML::Node& root, const std::vector<AxisSet>& sets);

}  // namespace fabuild
