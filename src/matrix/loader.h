#pragma once

#include <string>

#include "matrix/spec.h"

namespace fabuild {

// Reads and checks a matrix file. Every problem is a UserError (exit 2) at file:line:col.
MatrixSpec load_matrix(const std::string& path);
// The same for text already in memory; `file` names it in messages.
MatrixSpec parse_matrix(const std::string& text, const std::string& file);

}  // namespace fabuild
