#pragma once

// A cell writes its outputs into a staging directory of its own; only a cell that succeeded
// has them moved (renamed, so each appears whole or not at all) into its wheelhouse directory.
// Whatever else it left behind is removed: a failed, timed-out or cancelled cell leaves nothing.
// Through `files` (util/files.h), as every file the run loop touches but the cells' logs.

#include <string>
#include <vector>

#include "util/expected.h"
#include "util/files.h"

namespace fabuild {

// An empty staging directory (what a crashed run left there is removed first).
Expected<void> prepare_staging(Files& files, const std::string& dir);
// Moves the regular files of `staging` into `output_dir`; returns their names, sorted. Files
// whose name starts with "." are fabuild's own notes about the cell (the torch it checked, its
// compile tally), never outputs.
Expected<std::vector<std::string>> file_outputs(Files& files, const std::string& staging,
                                                const std::string& output_dir);
// Removes the staging directory and everything in it (what cannot be removed stays).
void discard_staging(Files& files, const std::string& dir);

// The last `n` lines of a log file (reads at most its last 64 KiB).
std::vector<std::string> log_tail(const Files& files, const std::string& path, std::size_t n);

}  // namespace fabuild
