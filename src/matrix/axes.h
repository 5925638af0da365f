#pragma once

// The matrix's axes, declared once. A row says everything the layer does with an axis besides
// holding its value: its key in include/exclude entries, the matrix key `--set` replaces, the
// filter flag that picks on it, whether a library cell has it, how a written value is spelled
// canonically, a cell's value, how a value or glob picks cells, its part of a cell's id, and how
// an include that adds a cell takes it. cell.cpp, match.cpp, expand_include.cpp, select.cpp,
// axis_set.cpp and loader_entries.cpp read this table; a new axis is a row here, a field of Cell
// and MatrixSpec, its reading in loader.cpp and its loop in expand.cpp's product
// (docs/architecture.md, "Adding an axis").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "matrix/cell.h"

namespace fabuild {

struct AxisRow {
  Axis axis;
  std::string_view key;         // include/exclude entries' key, and the axis's name in messages: "torch"
  std::string_view matrix_key;  // the matrix's own key, which --set replaces ("versions"); "": none
  std::string_view alt_key;     // another key for it in entries and --set ("rocm" for a ROCm GPU set); "": none
  std::string_view flag;        // the filter that picks on it: "--torch"; "": none
  std::string_view help;        // the filter's line in --help
  bool wheel_only;  // a library cell has none: no value, matched by nothing, named by no include that adds one

  // The canonical spelling of a written value ("3.12" -> "cp312"); nullopt: not a value of the
  // axis. Globs never reach it.
  std::optional<std::string> (*normalize)(std::string_view text);
  // A cell's canonical value, as ids, filters and JSON spell it.
  std::string (*value)(const Cell& cell);
  // Whether a canonical value or a glob picks the cell; null: the value, or a glob on it.
  bool (*matches)(const Cell& cell, std::string_view pattern);
  // Appends the axis's part of the cell's id; the parts follow the table's order.
  void (*id_part)(const Cell& cell, std::string& out);
  // An include that adds a cell: the entry's canonical value, or the matrix's only one (false:
  // the matrix lists several, and the entry must name it).
  void (*set)(Cell& cell, const std::string& canonical);
  bool (*from_matrix)(Cell& cell, const MatrixSpec& spec);

  // A filter's value that is no value of the axis: the message's noun, the values a typo is
  // compared with, and the hint.
  std::string_view unknown = {};  // "" : "not a <key> value"
  std::vector<std::string> (*known)() = nullptr;
  std::string_view hint = {};  // "" : the known values, or fabuild --help
  // How `values_on_axis` lists a cell's value in a filter's error; null: value().
  std::string (*listed)(const Cell& cell) = nullptr;
};

// Every axis, in the order ids spell them and errors list their keys.
const std::vector<AxisRow>& axis_rows();
const AxisRow& axis_row(Axis axis);
// The axis an entry key names ("torch", or "rocm" for the GPU set); nullopt for other keys.
const AxisRow* axis_for_key(std::string_view key);

}  // namespace fabuild
