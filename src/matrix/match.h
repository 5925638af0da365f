#pragma once

// How a value written in an include/exclude entry or a filter flag picks cells. One rule for
// all three: docs/matrix.md, "Matching".

#include <optional>
#include <string>
#include <string_view>

#include "matrix/cell.h"

namespace fabuild {

// The canonical spelling of `text` on `axis` ("3.12" -> "cp312", "cu128" -> "12.8"), or
// nullopt when it is not a value of that axis. Globs are returned unchanged.
std::optional<std::string> normalize_axis_value(Axis axis, std::string_view text);

// Whether a canonical value or glob matches the cell on that axis:
//   version  exact, or glob on "2.8.3"
//   torch    "2.8" matches the series (2.8 and every 2.8.x pin), "2.8.1" only that pin
//   cuda     the toolkit or torch's CUDA build: "12.8" matches both 12.8 toolkits and cu128 wheels
//   python / platform / cxx11_abi / artifact   exact, or glob on the canonical spelling
// A library cell matches no value of torch, python or cxx11_abi (it has none).
bool axis_matches(const Cell& cell, Axis axis, std::string_view pattern);

// All of the entry's keys match (any of each key's values).
bool entry_matches(const Cell& cell, const MatrixEntry& entry);

}  // namespace fabuild
