#pragma once

// Where a cell's wheel goes and what it is called: the wheelhouse contract (docs/matrix.md, "Ids, labels and paths").

#include <string>

#include "matrix/cell.h"

namespace fabuild {

// The local version label the build stamps into METADATA through FLASH_ATTN_LOCAL_VERSION:
// "cu128torch2.8cxx11abiTRUE", as FlashAttention's own releases spell it (the package's label
// format, plus ".<profile>" for a profile other than full); "cu128torch2.8" for a win_amd64
// cell, as the community's Windows wheels are named (PackagePreset::windows_label).
std::string local_label(const Cell& cell);

// The cell's directory under the wheelhouse: "fa2.8.3/torch2.8/cu128" ("rocm62" for ROCm;
// "/minimal" added for a profile other than full). A library cell's: "fa3.0.0/lib/cu130/minimal",
// with its profile always (full too), so that a CUDA set's libraries sit side by side.
std::string wheelhouse_subdir(const Cell& cell);

// A library cell's archive (docs/library.md): "flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64.tar.gz";
// library_stem is the same without ".tar.gz", the one directory at the top of the archive.
std::string library_stem(const Cell& cell);
std::string library_filename(const Cell& cell);

// The version its METADATA carries: "2.8.3+cu128torch2.8cxx11abiTRUE" (no "+" when the
// package's label is empty); "2.8.3" when the label goes in the file name only (`naming:
// upstream`, PackagePreset::label_in_metadata).
std::string wheel_version(const Cell& cell);

// The version its filed file name carries: always with the label, "2.8.3+cu12torch2.8cxx11abiTRUE".
std::string filed_version(const Cell& cell);

// The platform tag its filed file and WHEEL say: "linux_x86_64", or "manylinux_2_28_x86_64"
// under `platform_tag: manylinux_2_28` (a Linux cell; the build itself says linux_x86_64).
std::string filed_platform_tag(const Cell& cell);

// The name the wheel is filed under (PEP 427, with filed_version, the label's case as the cell
// spells it): "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl". The
// build's own file says wheel_version, which setuptools writes lower case.
std::string wheel_filename(const Cell& cell);

}  // namespace fabuild
