#pragma once

// Where a cell's package source comes from. For now every preset builds from its PyPI sdist,
// which carries the cutlass submodule that GitHub's tag archives lack.

#include <string>

#include "matrix/cell.h"

namespace fabuild {

struct SourcePlan {
  std::string requirement;  // "flash-attn==2.8.3"
  std::string how;          // "sdist through pip's configured index"
};

SourcePlan plan_source(const Cell& cell);
std::string describe(const SourcePlan& plan);

}  // namespace fabuild
