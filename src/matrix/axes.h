#pragma once

// The matrix's axes, declared once. A row says everything the layer does with an axis besides
// holding its value: its key in include/exclude entries, the matrix key `--set` replaces, the
// filter flag that picks on it, whether a library cell has it, how a written value is spelled
// canonically, a cell's value, how a value or glob picks cells, its part of a cell's id, and how
// an include that adds a cell takes it. cell.cpp, match.cpp, expand_include.cpp, select.cpp,
// axis_set.cpp and loader_entries.cpp read this table.
//
// The built-in axes (version, torch, CUDA, ...) hold typed values in Cell's own fields. Every
// other axis is a declared one (DeclaredAxis): plain names, read from the matrix, crossed into
// the product, spelled into ids, labels, wheelhouse paths and `{key}` placeholders, all by this
// table: a new one is one entry in declared_axes.cpp (docs/architecture.md, "Adding a matrix
// axis").

#include <functional>
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
  std::function<std::optional<std::string>(std::string_view text)> normalize;
  // A cell's canonical value, as ids, filters and JSON spell it.
  std::function<std::string(const Cell& cell)> value;
  // Whether a canonical value or a glob picks the cell; null: the value, or a glob on it.
  std::function<bool(const Cell& cell, std::string_view pattern)> matches;
  // Appends the axis's part of the cell's id; the parts follow the table's order.
  std::function<void(const Cell& cell, std::string& out)> id_part;
  // An include that adds a cell: the entry's canonical value, or the matrix's only one (false:
  // the matrix lists several, and the entry must name it).
  std::function<void(Cell& cell, const std::string& canonical)> set;
  std::function<bool(Cell& cell, const MatrixSpec& spec)> from_matrix;

  // A filter's value that is no value of the axis: the message's noun, the values a typo is
  // compared with, and the hint.
  std::string_view unknown = {};  // "" : "not a <key> value"
  std::function<std::vector<std::string>()> known = nullptr;
  std::string_view hint = {};  // "" : the known values, or fabuild --help
  // How `values_on_axis` lists a cell's value in a filter's error; null: value().
  std::function<std::string(const Cell& cell)> listed = nullptr;

  // A declared axis's place among them (Cell::declared, MatrixSpec::declared); -1: built in.
  int declared = -1;
  // A declared axis's value where the matrix names none; a cell of it has no part for the axis
  // in its id, label or wheelhouse path, so that adding an axis renames nothing.
  std::string_view fallback = {};
};

// An axis of plain names, beyond the built-in ones: one row of the table says all of it.
struct DeclaredAxis {
  std::string_view key;   // the matrix key, the include/exclude key and the {placeholder}
  std::string_view flag;  // its filter: "--variant"
  std::string_view help;
  std::string_view fallback;        // the value of a matrix that does not name the axis
  std::vector<std::string> values;  // the values it takes; empty: any name of [a-z][a-z0-9]* (32 at most)
  std::string_view hint = {};       // for a value it does not take
};

// Every axis, in the order ids spell them and errors list their keys: the built-in ones, then
// the declared ones.
const std::vector<AxisRow>& axis_rows();
// The declared axes' rows, made once for axis_rows() (matrix/declared_axes.cpp, where a new
// one is an entry).
std::vector<AxisRow> declared_axis_rows();
// The declared axes alone, in their order (Cell::declared's).
const std::vector<const AxisRow*>& declared_axes();
// A cell's values on the declared axes other than their fallbacks, in the table's order: what
// its label (".lineinfo"), wheelhouse path and library name add.
std::vector<std::string> declared_names(const Cell& cell);
const AxisRow& axis_row(Axis axis);
// The axis an entry key names ("torch", or "rocm" for the GPU set); nullopt for other keys.
const AxisRow* axis_for_key(std::string_view key);

}  // namespace fabuild
