#include "app/ci_shares.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "app/remote_cache.h"
#include "matrix/select.h"
#include "util/hash.h"

namespace fabuild {

namespace {

// Units a runner compiles at once: its cores over each unit's nvcc threads, fewer when the
// largest unit's recorded peak says its memory holds fewer.
double parallel_cores(const RowCosts& costs, const Cell& cell, const CiSpec& ci) {
  const int threads = std::max(1, cell.build().nvcc_threads.value_or(1));
  double at_once = std::max(1.0, std::floor(static_cast<double>(ci.runner_cores) / threads));
  const double peak_gb = costs.kernel_peak_mb() / 1024;
  if (peak_gb > 0) at_once = std::max(1.0, std::min(at_once, std::floor(ci.runner_memory_gb / peak_gb)));
  return std::min(static_cast<double>(ci.runner_cores), at_once * threads);
}

}  // namespace

RowTime row_time(const std::vector<Cell>& row, const CiSpec& ci, const CiCosts& costs) {
  const Cell& first = row.front();
  RowTime t;
  if (const auto it = costs.rows.find(remote_row_key(first)); it != costs.rows.end() && it->second.kernel_cpu_s() > 0) {
    t.recorded = true;
    t.kernel_s = it->second.kernel_cpu_s() / parallel_cores(it->second, first, ci);
    t.first_s = t.kernel_s / (1 - kExtraTagCost);  // what is not a kernel: as for a later tag's all-hit cell
    return t;
  }
  t.first_s = first.build().timeout_s ? *first.build().timeout_s : ci.per_arch_s * expected_cost(first);
  t.kernel_s = t.first_s * (1 - kExtraTagCost);
  return t;
}

std::string share_costs_arg(const Cell& first, const CiCosts& costs) {
  const auto it = costs.digests.find(remote_row_key(first));
  return it != costs.digests.end() ? it->second : "none";
}

double whole_row_seconds(const RowTime& t, std::size_t tags, const CiSpec& ci) {
  return ci.setup_s + t.first_s * (1.0 + kExtraTagCost * static_cast<double>(tags - 1));
}

int compile_shares_for(const std::vector<Cell>& row, const RowTime& t, const CiSpec& ci, const CiCosts& costs) {
  if (!costs.remote || ci.compile_shares == 1) return 0;
  const bool own_wheels = std::all_of(row.begin(), row.end(), [](const Cell& c) {
    return !c.library() && c.command().empty() && !c.rocm() && c.platform != Platform::kWinAmd64;
  });
  if (!own_wheels) return 0;
  if (ci.compile_shares > 1) return ci.compile_shares;
  const double cap = kShareFill * ci.max_timeout_s;
  if (whole_row_seconds(t, row.size(), ci) <= cap) return 0;
  const double per_share = cap - ci.setup_s;
  if (per_share <= 0) return 0;
  return std::max(2, static_cast<int>(std::ceil(t.kernel_s / per_share)));
}

double share_job_seconds(const RowTime& t, int shares, const CiSpec& ci) {
  return ci.setup_s + t.kernel_s / std::max(1, shares);
}

double finishing_job_seconds(const RowTime& t, std::size_t tags, const CiSpec& ci) {
  return ci.setup_s + t.first_s * kExtraTagCost * static_cast<double>(tags);
}

CiCosts ci_costs(const std::vector<Cell>& cells, const RemoteCacheSettings& remote, const System& system) {
  CiCosts costs;
  costs.remote = !remote.url.empty();
  std::shared_ptr<remote::Store> store;
  if (costs.remote && system.open_remote) {
    if (auto opened = system.open_remote(remote.url, system.env.value(remote.token_env))) store = std::move(*opened);
  }
  for (const auto& row : rows_of(cells)) {
    const std::string key = remote_row_key(cells[row.front()]);
    if (costs.rows.count(key) != 0) continue;
    RowCosts record = read_row_costs(row_costs_path(system.cache_dir(), key)).value_or(RowCosts{});
    if (store) {
      if (const auto text = fetch_row_costs(*store, key)) {
        costs.digests[key] = hex(sha256_of(*text));
        if (const auto theirs = row_costs_from_json(*text)) {
          for (const auto& [unit, cost] : theirs->units) record.units.emplace(unit, cost);
        }
      }
    }
    if (!record.empty()) costs.rows.emplace(key, std::move(record));
  }
  return costs;
}

}  // namespace fabuild
