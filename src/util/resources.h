#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace fabuild {

// What this machine (or the container/cgroup fabuild runs in) gives builds.
struct Resources {
  double cores = 1;         // may be fractional under a cgroup quota ("150000 100000" = 1.5)
  double memory_gb = 0;     // available now: min(cgroup limit - usage, MemAvailable)
  std::string cores_from;   // "cgroup cpu.max", "cpu affinity", ...
  std::string memory_from;  // "cgroup memory.max", "MemAvailable"
};

// Reads cgroup v2 (cpu.max, memory.max, memory.current) and /proc/meminfo under `root`, so tests
// can point it at a directory tree shaped like a machine's. Windows (resources_win32.cpp):
// GetActiveProcessorCount and GlobalMemoryStatusEx, under the limits of the Job Object fabuild
// runs in, if any; `root` is not used.
Resources detect_resources(const std::filesystem::path& root = "/");

}  // namespace fabuild
