#pragma once

// Where a cell's package source comes from: a directory, an sdist file or URL, or the PyPI
// sdist through pip (it carries the cutlass submodule that GitHub's tag archives lack).

#include <string>

#include "matrix/cell.h"

namespace fabuild {

struct SourcePlan {
  std::string requirement;  // "flash-attn==2.8.3"
  std::string how;          // "sdist through pip's configured index"
};

SourcePlan plan_source(const Cell& cell, const SourceSpec& spec);
std::string describe(const SourcePlan& plan);

}  // namespace fabuild
