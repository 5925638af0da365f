#pragma once

// The posix_spawn half of the POSIX process supervisor (process_posix.cpp).

#include <sys/types.h>

#include <string>

#include "util/expected.h"
#include "util/process.h"

namespace fabuild::posix {

// execvp's search (util/path_search.h), done here because posix_spawnp would search fabuild's
// PATH, not the child's: in the PATH of spec.env (/bin:/usr/bin when it has none), relative
// entries taken from the child's cwd, where the exec happens. A name with a '/' is as it is.
Expected<std::string> find_program(const ProcessSpec& spec);

// posix_spawn with a fresh process group, stdin from /dev/null, stdout and stderr on `output`,
// nothing else inherited, and signals as if fabuild had never touched them. The child's pid, or
// the failing call and its error.
Expected<pid_t> spawn(const ProcessSpec& spec, const std::string& program, int output);

}  // namespace fabuild::posix
