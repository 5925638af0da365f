#pragma once

// How the built-in axes read a filter's or an include's value and whether it picks a cell
// (docs/matrix.md, "Matching"): the functions the rows of matrix/axes.cpp are made of.

#include <optional>
#include <string>
#include <string_view>

#include "matrix/cell.h"
#include "util/version.h"

namespace fabuild {

// A version against a pattern (a glob, or a version); with `series_prefix` a series ("2.8")
// matches each release in it, while a pin ("2.8.0") is only itself.
bool version_matches(const Version& have, std::string_view pattern, bool series_prefix);

// torch: a series or pin, a range (">=2.10", ">=2.10,<2.14") or a stable-ABI window as its id
// says it ("2.10andhigher"); nullopt for anything else. A range picks the series and pins in
// it, and a stable-ABI cell by its window's floor; a series, the stable-ABI cells that serve it.
std::optional<std::string> normalize_torch(std::string_view text);
bool torch_matches(const Cell& cell, std::string_view pattern);

// cuda: a CUDA set or torch build ("12.8", "cu128"), a toolkit release ("12.9.1") or a ROCm set.
bool cuda_matches(const Cell& cell, std::string_view pattern);

// python: a tag or version ("cp312", "3.12"); an abi3 cell matches each Python it serves.
std::optional<std::string> normalize_python(std::string_view text);
bool python_matches(const Cell& cell, std::string_view pattern);

}  // namespace fabuild
