#include "matrix/match.h"

#include <algorithm>

#include "matrix/axes.h"
#include "util/text.h"

namespace fabuild {

std::optional<std::string> normalize_axis_value(Axis axis, std::string_view text) {
  const std::string t = trim(text);
  if (has_glob(t)) return t;
  return axis_row(axis).normalize(t);
}

bool axis_matches(const Cell& cell, Axis axis, std::string_view pattern) {
  const AxisRow& row = axis_row(axis);
  // A library has no torch, Python or ABI: a value on those axes picks wheel cells.
  if (cell.library() && row.wheel_only) return false;
  if (row.matches != nullptr) return row.matches(cell, pattern);
  const std::string have = row.value(cell);
  if (has_glob(pattern)) return glob_match(pattern, have);
  const auto want = normalize_axis_value(axis, pattern);
  return want && *want == have;
}

bool entry_matches(const Cell& cell, const MatrixEntry& entry) {
  return std::all_of(entry.match.begin(), entry.match.end(), [&](const AxisMatch& m) {
    return std::any_of(m.values.begin(), m.values.end(),
                       [&](const std::string& v) { return axis_matches(cell, m.axis, v); });
  });
}

}  // namespace fabuild
