#pragma once

// The posix_spawn half of the POSIX process supervisor (process_posix.cpp).

#include <sys/types.h>

#include <string>

#include "util/process.h"

namespace fabuild::posix {

// execvp's search, done here because posix_spawnp would search fabuild's PATH, not the child's.
// Relative PATH entries are taken from the child's cwd, where the exec happens. Sets `error`.
std::string find_program(const ProcessSpec& spec, std::string& error);

// posix_spawn with a fresh process group, stdin from /dev/null, stdout and stderr on `output`,
// nothing else inherited, and signals as if fabuild had never touched them. Returns the failing
// call and its error, or "" with *pid set.
std::string spawn(const ProcessSpec& spec, const std::string& program, int output, pid_t* pid);

}  // namespace fabuild::posix
