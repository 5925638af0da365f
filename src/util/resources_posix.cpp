#include "util/resources.h"

#include "util/read_whole.h"

#include <sched.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace fabuild {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The cgroup v2 directory this process lives in ("0::/user.slice/..." in /proc/self/cgroup).
std::filesystem::path cgroup_dir(const std::filesystem::path& root) {
  const auto self = read_whole(root / "proc/self/cgroup");
  std::string rel = "/";
  if (self) {
    std::istringstream lines(*self);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("0::", 0) == 0) rel = line.substr(3);
    }
  }
  return root / "sys/fs/cgroup" / std::filesystem::path(rel).relative_path();
}

std::optional<double> cgroup_cores(const std::filesystem::path& dir) {
  const auto text = read_whole(dir / "cpu.max");
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string quota;
  double period = 0;
  in >> quota >> period;
  if (quota == "max" || period <= 0) return std::nullopt;
  try {
    return std::stod(quota) / period;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> cgroup_free_gb(const std::filesystem::path& dir) {
  const auto limit = read_whole(dir / "memory.max");
  if (!limit || limit->rfind("max", 0) == 0) return std::nullopt;
  try {
    const double max = std::stod(*limit);
    const auto current = read_whole(dir / "memory.current");
    const double used = current ? std::stod(*current) : 0.0;
    return std::max(0.0, max - used) / kGiB;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> mem_available_gb(const std::filesystem::path& root) {
  const auto text = read_whole(root / "proc/meminfo");
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      double kib = 0;
      fields >> kib;
      return kib * 1024.0 / kGiB;
    }
  }
  return std::nullopt;
}

double affinity_cores(const std::filesystem::path& root) {
  if (root == "/") {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

Resources detect_resources(const std::filesystem::path& root) {
  Resources r;
  const auto dir = cgroup_dir(root);
  const double affinity = affinity_cores(root);
  if (const auto quota = cgroup_cores(dir); quota && *quota < affinity) {
    r.cores = *quota;
    r.cores_from = "cgroup cpu.max";
  } else {
    r.cores = affinity;
    r.cores_from = "cpu affinity";
  }
  const auto available = mem_available_gb(root);
  const auto cgroup = cgroup_free_gb(dir);
  if (cgroup && (!available || *cgroup < *available)) {
    r.memory_gb = *cgroup;
    r.memory_from = "cgroup memory.max";
  } else if (available) {
    r.memory_gb = *available;
    r.memory_from = "MemAvailable";
  }
  return r;
}

}  // namespace fabuild
