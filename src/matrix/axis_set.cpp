#include "matrix/axis_set.h"

#include <algorithm>

#include <fmt/format.h>

#include "matrix/axes.h"
#include "matrix/torch_range.h"
#include "util/error.h"
#include "util/text.h"

namespace fabuild {

namespace {

constexpr const char* kHint = "write --set AXIS=V1,V2 with AXIS one of {}, e.g. --set torch=2.12,2.13";

std::string axes_list() { return join(settable_axes(), ", "); }

}  // namespace

const std::vector<std::string>& settable_axes() {
  static const std::vector<std::string> axes = [] {
    std::vector<std::string> keys;
    for (const AxisRow& row : axis_rows()) {
      if (!row.matrix_key.empty()) keys.emplace_back(row.matrix_key);
      if (!row.alt_key.empty()) keys.emplace_back(row.alt_key);
    }
    keys.emplace_back("archs");  // a setting, not an axis: one arch list, "80;90"
    return keys;
  }();
  return axes;
}

AxisSet parse_axis_set(const std::string& text) {
  const Location where{"--set " + text, 0, 0};
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw config_error(where, "--set takes AXIS=VALUES", fmt::format(kHint, axes_list()));
  }
  AxisSet set;
  set.text = text;
  set.axis = trim(text.substr(0, eq));
  if (set.axis == "fa" || set.axis == "version") set.axis = "versions";
  const auto& axes = settable_axes();
  if (std::find(axes.begin(), axes.end(), set.axis) == axes.end()) {
    throw config_error(where,
                       fmt::format("--set replaces an axis of the matrix, and '{}' is not one{}", set.axis,
                                   did_you_mean(set.axis, axes)),
                       fmt::format(kHint, axes_list()));
  }
  for (const auto& value : split(text.substr(eq + 1), ',')) {
    const std::string v = trim(value);
    if (v.empty()) {
      throw config_error(where, fmt::format("--set {}: an empty value", set.axis),
                         fmt::format("list the values, comma-separated: --set {}=V1,V2", set.axis));
    }
    set.values.push_back(v);
  }
  // A torch range's bound is written after a comma too (">=2.10,<2.14"): one value.
  if (set.axis == "torch") set.values = join_torch_range_bounds(set.values);
  if (set.values.empty()) {
    throw config_error(where, fmt::format("--set {}: no value", set.axis),
                       fmt::format("list the values, comma-separated: --set {}=V1,V2", set.axis));
  }
  return set;
}

std::vector<yaml::Reader::Origin> apply_axis_sets(YAML::Node& root, const std::vector<AxisSet>& sets) {
  std::vector<yaml::Reader::Origin> origins;
  if (sets.empty() || !root.IsMap()) return origins;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const AxisSet& set = sets[i];
    for (std::size_t j = 0; j < i; ++j) {
      if (sets[j].axis == set.axis) {
        throw config_error(Location{set.flag(), 0, 0},
                           fmt::format("--set gives {} twice (first as {})", set.axis, sets[j].flag()),
                           fmt::format("give every value of {} in one --set, comma-separated", set.axis));
      }
    }
    YAML::Node value;
    if (set.axis == "archs") {
      value = YAML::Node(join(set.values, ";"));  // one arch list, as the file writes "80;90"
    } else {
      for (const auto& v : set.values) value.push_back(YAML::Node(v));
    }
    root.remove(set.axis);
    root[set.axis] = value;
    origins.push_back({value, set.flag()});
    for (const auto& item : value) origins.push_back({item, set.flag()});
    origins.push_back({yaml::Reader::key_node(root, set.axis), set.flag()});
  }
  return origins;
}

}  // namespace fabuild
