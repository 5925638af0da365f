#include <algorithm>

#include "util/resources.h"
#include "util/windows_api.h"

namespace fabuild {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The Job Object fabuild runs in, if any (a CI runner, a container), may give it less than the
// machine: a CPU rate cap and a memory limit, as a cgroup does on Linux.
JOBOBJECT_EXTENDED_LIMIT_INFORMATION job_limits() {
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = {};
  QueryInformationJobObject(nullptr, JobObjectExtendedLimitInformation, &limits, sizeof limits, nullptr);
  return limits;
}

std::optional<double> job_cpu_share() {
  JOBOBJECT_CPU_RATE_CONTROL_INFORMATION rate = {};
  if (!QueryInformationJobObject(nullptr, JobObjectCpuRateControlInformation, &rate, sizeof rate, nullptr))
    return std::nullopt;
  const DWORD flags = rate.ControlFlags;
  if ((flags & JOB_OBJECT_CPU_RATE_CONTROL_ENABLE) == 0 || (flags & JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP) == 0)
    return std::nullopt;
  return rate.CpuRate / 10000.0;  // in 1/100 of a percent of the whole machine
}

}  // namespace

// `root` is for POSIX's files (cgroup, /proc); Windows asks the system.
Resources detect_resources(const std::filesystem::path&) {
  Resources r;
  const DWORD processors = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
  r.cores = std::max<DWORD>(1, processors);
  r.cores_from = "GetActiveProcessorCount";
  if (const auto share = job_cpu_share(); share && *share * processors < r.cores) {
    r.cores = std::max(1.0, *share * processors);
    r.cores_from = "job CPU rate";
  }
  MEMORYSTATUSEX memory = {};
  memory.dwLength = sizeof memory;
  if (GlobalMemoryStatusEx(&memory)) {
    r.memory_gb = static_cast<double>(memory.ullAvailPhys) / kGiB;
    r.memory_from = "GlobalMemoryStatusEx";
  }
  const JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = job_limits();
  if ((limits.BasicLimitInformation.LimitFlags & JOB_OBJECT_LIMIT_JOB_MEMORY) != 0) {
    // Windows tells a job's peak commit, not its current one: the peak errs on the safe side.
    const double limit = static_cast<double>(limits.JobMemoryLimit) / kGiB;
    const double peak = static_cast<double>(limits.PeakJobMemoryUsed) / kGiB;
    if (limit - peak < r.memory_gb) {
      r.memory_gb = std::max(0.0, limit - peak);
      r.memory_from = "job memory limit";
    }
  }
  return r;
}

}  // namespace fabuild
