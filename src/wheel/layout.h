#pragma once

// Where a cell's wheel goes and what it is called: the wheelhouse contract (DESIGN.md).

#include <string>

#include "matrix/cell.h"

namespace fabuild {

// The local version label the build stamps into METADATA through FLASH_ATTN_LOCAL_VERSION:
// "cu128torch2.8cxx11abiTRUE", as FlashAttention's own releases spell it (the package's label
// format, plus ".<profile>" for a profile other than full).
std::string local_label(const Cell& cell);

// The cell's directory under the wheelhouse: "fa2.8.3/torch2.8/cu128" ("rocm62" for ROCm;
// "/minimal" added for a profile other than full).
std::string wheelhouse_subdir(const Cell& cell);

// The version its METADATA carries: "2.8.3+cu128torch2.8cxx11abiTRUE" (no "+" when the
// package's label is empty).
std::string wheel_version(const Cell& cell);

// The wheel file the build produces (PEP 427, with the label in the version, which setuptools
// normalises to lower case): "flash_attn-2.8.3+cu128torch2.8cxx11abitrue-cp312-cp312-linux_x86_64.whl".
std::string wheel_filename(const Cell& cell);

}  // namespace fabuild
