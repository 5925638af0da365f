#include "util/resources.h"

#include "util/read_whole.h"
#include "util/text.h"

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
  const std::optional<double> cores = parse_number(quota);
  if (!cores) return std::nullopt;
  return *cores / period;
}

std::optional<double> cgroup_free_gb(const std::filesystem::path& dir) {
  const auto limit = read_whole(dir / "memory.max");
  if (!limit || limit->rfind("max", 0) == 0) return std::nullopt;
  const std::optional<double> max = parse_number(*limit);
  const auto current = read_whole(dir / "memory.current");
  const std::optional<double> used = current ? parse_number(*current) : 0.0;
  if (!max || !used) return std::nullopt;
  return std::max(0.0, *max - *used) / kGiB;
}

// cgroup v1 (a host without the unified hierarchy, or a runner confined through it): the
// directory of `controller` this process is in ("4:memory:/fabuild-job-1" in /proc/self/cgroup).
std::optional<std::filesystem::path> cgroup_v1_dir(const std::filesystem::path& root, const std::string& controller) {
  const auto self = read_whole(root / "proc/self/cgroup");
  if (!self) return std::nullopt;
  std::istringstream lines(*self);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::istringstream names(line.substr(first + 1, second - first - 1));
    for (std::string name; std::getline(names, name, ',');) {
      if (name == controller) {
        return root / "sys/fs/cgroup" / controller / std::filesystem::path(line.substr(second + 1)).relative_path();
      }
    }
  }
  return std::nullopt;
}

// memory.limit_in_bytes less memory.usage_in_bytes; nullopt when unlimited (a huge number).
std::optional<double> cgroup_v1_free_gb(const std::filesystem::path& root) {
  const auto dir = cgroup_v1_dir(root, "memory");
  if (!dir) return std::nullopt;
  const auto limit = read_whole(*dir / "memory.limit_in_bytes");
  if (!limit) return std::nullopt;
  const std::optional<double> max = parse_number(*limit);
  if (max && *max >= 1e18) return std::nullopt;  // "no limit" is 2^63 rounded to the page size
  const auto usage = read_whole(*dir / "memory.usage_in_bytes");
  const std::optional<double> used = usage ? parse_number(*usage) : 0.0;
  if (!max || !used) return std::nullopt;
  return std::max(0.0, *max - *used) / kGiB;
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
  const auto cgroup_v1 = cgroup ? std::nullopt : cgroup_v1_free_gb(root);
  if (cgroup && (!available || *cgroup < *available)) {
    r.memory_gb = *cgroup;
    r.memory_from = "cgroup memory.max";
  } else if (cgroup_v1 && (!available || *cgroup_v1 < *available)) {
    r.memory_gb = *cgroup_v1;
    r.memory_from = "cgroup v1 memory.limit_in_bytes";
  } else if (available) {
    r.memory_gb = *available;
    r.memory_from = "MemAvailable";
  }
  return r;
}

}  // namespace fabuild
