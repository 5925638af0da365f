#pragma once

// What every planned cell's run has, however it is built: its id, environment, share of the
// budget, time limits, and where its log, staging directory and wheels go; and the command that
// builds a package cell's wheel.

#include <filesystem>
#include <string>
#include <vector>

#include "app/plan.h"
#include "engine/runner.h"

namespace fabuild {

// The run of `p` with no steps yet; `wheelhouse` is the plan's.
CellRun base_cell_run(const PlannedCell& p, const std::string& wheelhouse);

// `setup.py bdist_wheel`, or `pip wheel` without build isolation (the matrix's frontend), run by
// the cell environment's `python` in the package's setup.py directory, leaving the wheel in `dist`.
std::vector<std::string> wheel_build_argv(Frontend frontend, const std::string& python,
                                          const std::filesystem::path& dist);

// `argv` run under umask 022, whatever fabuild's caller set: how a POSIX site runs a wheel's
// build. The wheel tool zips each file with its mode on disk, and the files the build makes
// (the modules, .dist-info) take theirs from the umask: rwxrwxr-x and rw-rw-r-- under 0002, so
// the same cell from the same cache gave other wheel bytes. posix_spawn has no umask attribute,
// and fabuild's own umask is its whole process's (worker threads file wheels meanwhile, the
// caller's umask is theirs to keep), so a POSIX shell sets it and execs the build: a fixed
// script, with the build's argv passed as its arguments, never spliced into it. The source tree
// the build reads gets fixed modes before it (source_steps.h, modes_step).
std::vector<std::string> with_fixed_umask(std::vector<std::string> argv);

}  // namespace fabuild
