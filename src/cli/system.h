#pragma once

#include "app/system.h"

namespace fabuild {

// The real one: this process's environment, POSIX processes, the terminal on stdout, the cache
// directory its environment names (docs/host-builds.md), the machine's cgroup and memory.
System real_system();

}  // namespace fabuild
