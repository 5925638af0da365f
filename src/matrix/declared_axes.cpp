// The declared axes (axes.h's DeclaredAxis): axes of plain names, each one entry of
// declared() below, and every use the table makes of one.

#include <algorithm>

#include "matrix/axes.h"
#include "util/text.h"

namespace fabuild {

namespace {

// The declared axes. A new axis of plain names is one more entry here (docs/architecture.md).
std::vector<DeclaredAxis> declared() {
  return {
      // Builds of one cell that differ by what an include gives them (env, archs, a command):
      // `variant: [default, lineinfo]` with `include: [{variant: lineinfo, env: {...}}]` files
      // both, the second labelled `.lineinfo` (docs/matrix.md, "Variants").
      {.key = "variant",
       .flag = "--variant",
       .help = "Variants the matrix names, e.g. lineinfo (default: the one without a name)",
       .fallback = "default",
       .values = {},
       .hint = "a variant is a name of lowercase letters and digits, starting with a letter"},
  };
}

// The cell's value on declared axis `i`: its setup's, or the axis's fallback.
std::string_view value_of(const Cell& c, std::size_t i, std::string_view fallback) {
  return i < c.declared().size() ? std::string_view(c.declared()[i]) : fallback;
}

void put(Cell& c, std::size_t i, std::string_view fallback, const std::string& value) {
  auto& values = c.own_setup().declared;
  if (values.size() <= i) values.resize(i + 1, std::string(fallback));
  values[i] = value;
}

AxisRow declared_row(const DeclaredAxis& d, std::size_t i) {
  const std::string_view fallback = d.fallback;  // a literal's, as every view of DeclaredAxis
  const std::vector<std::string> values = d.values;
  std::function<std::vector<std::string>()> known;
  if (!values.empty()) known = [values] { return values; };
  return {
      .axis = static_cast<Axis>(kAxisCount + i),
      .key = d.key,
      .matrix_key = d.key,
      .alt_key = "",
      .flag = d.flag,
      .help = d.help,
      .wheel_only = false,
      .normalize = [values](std::string_view t) -> std::optional<std::string> {
        const std::string v = trim(t);
        if (values.empty() ? is_profile_name(v) : std::find(values.begin(), values.end(), v) != values.end()) return v;
        return std::nullopt;
      },
      .value = [i, fallback](const Cell& c) { return std::string(value_of(c, i, fallback)); },
      .matches = nullptr,
      // Only for a value other than the fallback.
      .id_part =
          [i, fallback](const Cell& c, std::string& out) {
            const std::string_view v = value_of(c, i, fallback);
            if (v == fallback) return;
            out += '-';
            out += v;
          },
      .set = [i, fallback](Cell& c, const std::string& v) { put(c, i, fallback, v); },
      .from_matrix =
          [i, fallback](Cell& c, const MatrixSpec& s) {
            if (i >= s.declared.size() || s.declared[i].size() != 1) return false;
            // A cell without a value has the fallback: its setup stays shared.
            if (value_of(c, i, fallback) != s.declared[i].front().value)
              put(c, i, fallback, s.declared[i].front().value);
            return true;
          },
      .unknown = {},
      .known = std::move(known),
      .hint = d.hint,
      .listed = nullptr,
      .declared = static_cast<int>(i),
      .fallback = fallback,
  };
}

}  // namespace

std::vector<AxisRow> declared_axis_rows() {
  const auto axes = declared();
  std::vector<AxisRow> rows;
  for (std::size_t i = 0; i < axes.size(); ++i) rows.push_back(declared_row(axes[i], i));
  return rows;
}

const std::vector<const AxisRow*>& declared_axes() {
  static const std::vector<const AxisRow*> rows = [] {
    std::vector<const AxisRow*> out;
    for (const auto& row : axis_rows()) {
      if (row.declared >= 0) out.push_back(&row);
    }
    return out;
  }();
  return rows;
}

std::vector<std::string> declared_names(const Cell& cell) {
  std::vector<std::string> names;
  const auto& values = cell.declared();
  for (std::size_t i = 0; i < values.size() && i < declared_axes().size(); ++i) {
    if (values[i] != declared_axes()[i]->fallback) names.push_back(values[i]);
  }
  return names;
}

}  // namespace fabuild
