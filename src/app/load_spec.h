#pragma once

// The matrix as the plan takes it: the file, what the command line overrides in it, and what a
// source directory's setup.py says of the package (its abi3 floor, its stable-ABI build, the
// switches it reads), read before the cells are made.

#include <string>

#include "app/options.h"
#include "matrix/spec.h"

namespace fabuild {

// The matrix file with what the command line overrides in it (--torch-index). A matrix that names
// no platform builds for `host_platform` (the machine's, as cibuildwheel does) where that is one
// fabuild knows; --ci-matrix passes none, and its jobs stay linux_x86_64 unless the matrix says.
MatrixSpec load_spec(const Options& options, const std::string& host_platform = {});

}  // namespace fabuild
