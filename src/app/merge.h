#pragma once

// `fabuild merge PART... -o OUT`: partial wheelhouses (one per CI job) merged into one
// (wheel/merge.h), then OUT's index made again.

#include <ostream>
#include <string>
#include <vector>

#include "util/exit_code.h"

namespace fabuild {

struct MergeOptions {
  std::vector<std::string> parts;
  std::string out;
  bool dry_run = false;  // check and say what would be done; write nothing
};

// Prints what was merged. A conflict or a damaged part is a UserError (exit 1) listing every
// one of them, after which OUT is as it was; a part that is not a directory is exit 2.
ExitCode merge_wheelhouses(const MergeOptions& options, std::ostream& out);

}  // namespace fabuild
