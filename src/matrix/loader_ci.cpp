// `ci:` in the matrix (docs/ci.md): how `--ci-matrix` lays cells out as CI jobs.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "matrix/loader_parts.h"

namespace fabuild::loader {

namespace {

using yaml::Reader;

const std::vector<std::string> kCiKeys = {"runner",           "runners",     "max_entries",    "setup_time",
                                          "time_per_arch",    "max_timeout", "compile_shares", "runner_cores",
                                          "runner_memory_gb", "max_parallel"};

// GitHub refuses a matrix of more jobs than this.
constexpr int kGithubMaxJobs = 256;

}  // namespace

CiSpec read_ci(const Reader& r, const YAML::Node& node) {
  r.expect_map(node, "ci");
  r.check_keys(node, kCiKeys, "ci");
  CiSpec ci;
  ci.where = r.at(node);
  const auto label = [&](const YAML::Node& n, const std::string& what) {
    std::string value = r.scalar(n, what);
    const bool blank = value.find_first_not_of(" \t") == std::string::npos;
    const bool control =
        std::any_of(value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
    if (blank || control) {
      r.fail(n, what + " must be a runner label on one line",
             "e.g. ubuntu-latest, or the label of a self-hosted runner");
    }
    return value;
  };
  if (const auto n = node["runner"]) ci.runner = label(n, "ci.runner");
  if (const auto n = node["runners"]) {
    r.expect_map(n, "ci.runners");
    for (const auto& kv : n) {
      const std::string platform = r.scalar(kv.first, "a platform under ci.runners");
      if (!parse_platform(platform)) {
        r.fail(kv.first, fmt::format("ci.runners: '{}' is not a platform", platform),
               "use linux_x86_64, linux_aarch64 or win_amd64");
      }
      ci.runners[platform] = label(kv.second, "ci.runners." + platform);
    }
  }
  if (const auto n = node["max_entries"]) {
    ci.max_entries = r.positive_int(n, "ci.max_entries");
    if (ci.max_entries > kGithubMaxJobs) {
      r.fail(n,
             fmt::format("ci.max_entries is {}, but a GitHub Actions matrix holds at most {} jobs", ci.max_entries,
                         kGithubMaxJobs),
             fmt::format("use at most {}: more cells than that are grouped into shards", kGithubMaxJobs));
    }
  }
  if (const auto n = node["setup_time"]) ci.setup_s = r.duration_s(n, "ci.setup_time");
  if (const auto n = node["time_per_arch"]) ci.per_arch_s = r.duration_s(n, "ci.time_per_arch");
  if (const auto n = node["max_timeout"]) ci.max_timeout_s = r.duration_s(n, "ci.max_timeout");
  if (const auto n = node["compile_shares"]) {
    ci.compile_shares = r.positive_int(n, "ci.compile_shares");
    if (ci.compile_shares > kGithubMaxJobs) {
      r.fail(
          n, fmt::format("ci.compile_shares is {}, more than a GitHub Actions matrix holds", ci.compile_shares),
          fmt::format("use at most {}, or leave it out: fabuild then takes as many as the cap needs", kGithubMaxJobs));
    }
  }
  if (const auto n = node["max_parallel"]) ci.max_parallel = r.positive_int(n, "ci.max_parallel");
  if (const auto n = node["runner_cores"]) ci.runner_cores = r.positive_int(n, "ci.runner_cores");
  if (const auto n = node["runner_memory_gb"]) ci.runner_memory_gb = r.positive_number(n, "ci.runner_memory_gb");
  if (ci.max_timeout_s < ci.setup_s + 60) {
    r.fail(node["max_timeout"] ? node["max_timeout"] : node,
           fmt::format("ci.max_timeout ({:g} min) leaves no time for a cell after ci.setup_time ({:g} min)",
                       std::ceil(ci.max_timeout_s / 60), std::ceil(ci.setup_s / 60)),
           "raise max_timeout or lower setup_time");
  }
  return ci;
}

}  // namespace fabuild::loader
