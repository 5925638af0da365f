#include "costs/ci_estimate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "costs/contention.h"
#include "costs/unit_peaks.h"
#include "engine/budget.h"
#include "matrix/select.h"

namespace fabuild {

struct GatedShares {
  RowCosts record;
  int nvcc_threads = 1;
  double cores = 0;
  double memory_gb = 0;
  mutable std::map<int, std::vector<double>> by_count;  // share_jobs_seconds' kernel times, by share count
};

namespace {

// Units a runner compiles at once: its cores over each unit's nvcc threads, fewer when the
// largest unit's recorded peak says its memory holds fewer.
double parallel_cores(const RowCosts& costs, int nvcc_threads, double cores, double memory_gb) {
  const int threads = std::max(1, nvcc_threads);
  const FixedSlots at_once = fixed_slots(cores, memory_gb, costs.kernel_peak_mb(threads), threads);
  return std::min(cores, static_cast<double>(at_once.slots) * threads);
}

}  // namespace

RowTime row_time(const std::vector<Cell>& row, const CiSpec& ci, const CiCosts& costs) {
  const Cell& first = row.front();
  RowTime t;
  t.setup_s = ci.setup_s;
  const auto it = costs.rows.find(remote_row_key(first));
  if (it != costs.rows.end()) {
    if (const auto setup = it->second.setup_s()) {
      t.setup_s = *setup;
      t.setup_recorded = true;
    }
  }
  if (it != costs.rows.end()) {
    RunnerShape runner{static_cast<double>(ci.runner_cores), ci.runner_memory_gb,
                       first.build().nvcc_threads.value_or(1), std::nullopt};
    // A row the memory gate builds (costs/unit_peaks.h): its kernels as the gate would start them
    // on the runner, in the runner's budget (its memory less the matrix's reserve); else on
    // slots sized by the largest peak.
    if (gate_applies(first)) {
      BudgetSpec reserve;
      reserve.reserve_gb = ci.runner_reserve_gb;
      const Budget budget = make_budget(Resources{runner.cores, ci.runner_memory_gb, "ci", "ci"}, reserve);
      runner.gate = GateGrant{budget.cores, budget.memory_gb, job_shape(first).nvcc_threads};
    }
    if (auto recorded = recorded_row_time(it->second, runner)) {
      recorded->setup_s = t.setup_s;
      recorded->setup_recorded = t.setup_recorded;
      return *recorded;
    }
  }
  t.first_s = first.build().timeout_s ? *first.build().timeout_s : ci.per_arch_s * expected_cost(first);
  t.kernel_s = t.first_s * (1 - kExtraTagCost);
  t.tag_s = t.first_s * kExtraTagCost;
  return t;
}

FixedSlots fixed_slots(double cores, double memory_gb, double largest_peak_mb, int nvcc_threads) {
  FixedSlots f;
  f.by_cores = static_cast<int>(std::max(1.0, std::floor(cores / std::max(1, nvcc_threads))));
  f.slots = f.by_cores;
  const double peak_gb = largest_peak_mb / 1024;
  if (peak_gb > 0) {
    f.by_memory = static_cast<int>(std::max(1.0, std::floor(memory_gb / peak_gb)));
    f.slots = std::min(f.slots, f.by_memory);
  }
  return f;
}

std::optional<RowTime> recorded_row_time(const RowCosts& measured, const RunnerShape& runner) {
  if (measured.kernel_cpu_s() <= 0) return std::nullopt;
  RowTime t;
  t.recorded = true;
  // The gate builds a row whose record has its kernels' peaks; else fixed slots do.
  const GateGrant* g = runner.gate && kernel_peaks(measured, runner.gate->nvcc_threads) ? &*runner.gate : nullptr;
  // Its units as the runner's own compiles load it (costs/contention.h): the gate fills the
  // runner; fixed slots fill the cores they take.
  const double fixed_cores = parallel_cores(measured, runner.nvcc_threads, runner.cores, runner.memory_gb);
  t.recorded_busy = recorded_busy(measured);
  t.busy = g != nullptr ? 1.0 : fixed_cores / std::max(1.0, runner.cores);
  const RowCosts record = at_busy(measured, t.busy);
  if (g != nullptr) {
    if (const auto s = gated_kernel_seconds(record, g->nvcc_threads, g->cores, g->memory_gb,
                                            record.built.empty() ? nullptr : &record.built)) {
      t.kernel_s = *s;
      t.gated = true;
      t.gate = std::make_shared<const GatedShares>(GatedShares{record, g->nvcc_threads, g->cores, g->memory_gb, {}});
    }
  }
  if (!t.gated) t.kernel_s = record.kernel_cpu_s() / fixed_cores;
  // A later tag compiles what is not a kernel (the API file, per Python tag) and does the rest.
  t.tag_s = kTagStepsS;
  for (const auto& [unit, cost] : record.units) {
    if (!unit.ends_with(".cu")) t.tag_s += cost.cpu_s;
  }
  t.first_s = t.kernel_s + t.tag_s;
  return t;
}

std::string share_costs_arg(const Cell& first, const CiCosts& costs) {
  const auto it = costs.digests.find(remote_row_key(first));
  return it != costs.digests.end() ? it->second : "none";
}

double whole_row_seconds(const RowTime& t, std::size_t tags) {
  return t.setup_s + t.first_s + t.tag_s * static_cast<double>(tags - 1);
}

int compile_shares_for(const std::vector<Cell>& row, const RowTime& t, const CiSpec& ci, const CiCosts& costs) {
  if (!costs.remote || ci.compile_shares == 1) return 0;
  const bool own_wheels = std::all_of(row.begin(), row.end(), [](const Cell& c) {
    return !c.library() && c.command().empty() && !c.rocm() && c.platform != Platform::kWinAmd64;
  });
  if (!own_wheels) return 0;
  if (ci.compile_shares > 1) return ci.compile_shares;
  return shares_to_fit(t, row.size(), ci.max_timeout_s);
}

int shares_to_fit(const RowTime& t, std::size_t tags, double max_timeout_s) {
  const double cap = kShareFill * max_timeout_s;
  if (whole_row_seconds(t, tags) <= cap) return 0;
  const double per_share = cap - t.setup_s;
  if (per_share <= 0) return 0;
  int shares = std::max(2, static_cast<int>(std::ceil(t.kernel_s / per_share)));
  // A gated share's last compiles may run alone: more shares while the longest would not fit.
  constexpr int kMostShares = 256;
  while (t.gate && shares < kMostShares && share_job_seconds(t, shares) > cap) ++shares;
  return shares;
}

std::vector<double> share_jobs_seconds(const RowTime& t, int shares) {
  shares = std::max(1, shares);
  std::vector<double> kernels(static_cast<std::size_t>(shares), t.kernel_s / shares);
  if (t.gate) {
    const GatedShares& g = *t.gate;
    const auto [at, fresh] = g.by_count.try_emplace(shares);
    if (fresh) {
      // The kernels the build compiles when the record lists them, else those it has costs for.
      std::vector<std::string> units = g.record.built;
      if (units.empty()) {
        for (const auto& [unit, cost] : g.record.units) {
          if (kernel_unit(unit)) units.push_back(unit);
        }
      }
      const ShareSplitPlan split = split_units(units, &g.record, shares);
      std::vector<std::vector<std::string>> mine(static_cast<std::size_t>(shares));
      for (const auto& unit : units) mine[static_cast<std::size_t>(split.share_of.at(unit) - 1)].push_back(unit);
      for (const auto& only : mine) {
        at->second.push_back(
            gated_kernel_seconds(g.record, g.nvcc_threads, g.cores, g.memory_gb, &only).value_or(t.kernel_s / shares));
      }
    }
    kernels = at->second;
  }
  for (double& s : kernels) s += t.setup_s;
  return kernels;
}

double share_job_seconds(const RowTime& t, int shares) {
  const std::vector<double> each = share_jobs_seconds(t, shares);
  return *std::max_element(each.begin(), each.end());
}

double finishing_job_seconds(const RowTime& t, std::size_t tags) {
  return t.setup_s + t.tag_s * static_cast<double>(tags);
}

double list_schedule(const std::vector<double>& jobs, int runners) {
  std::vector<double> free_at(static_cast<std::size_t>(std::max(1, runners)), 0.0);
  for (double job : jobs) {
    const auto first = std::min_element(free_at.begin(), free_at.end());
    *first += job;
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

double runner_seconds(const std::vector<RowPlan>& rows) {
  double sum = 0;
  for (const RowPlan& r : rows) {
    if (r.shares > 0) {
      for (double s : share_jobs_seconds(r.time, r.shares)) sum += s;
      sum += finishing_job_seconds(r.time, r.tags);
    } else {
      sum += whole_row_seconds(r.time, r.tags);
    }
  }
  return sum;
}

double graph_seconds(const std::vector<RowPlan>& rows, int runners) {
  // The first stage: every compile job, then the rows built whole (they need nothing of the
  // shares); the second: the finishing jobs, once the whole first stage has ended.
  std::vector<double> first;
  std::vector<double> whole;
  std::vector<double> finishing;
  for (const RowPlan& r : rows) {
    if (r.shares > 0) {
      for (double s : share_jobs_seconds(r.time, r.shares)) first.push_back(s);
      finishing.push_back(finishing_job_seconds(r.time, r.tags));
    } else {
      whole.push_back(whole_row_seconds(r.time, r.tags));
    }
  }
  first.insert(first.end(), whole.begin(), whole.end());
  return stages_seconds({first, finishing}, runners);
}

double stages_seconds(const std::vector<std::vector<double>>& stages, int runners) {
  double sum = 0;
  for (const auto& stage : stages) sum += stage.empty() ? 0 : list_schedule(stage, runners);
  return sum;
}

void balance_shares(std::vector<RowPlan>& rows, const CiSpec& ci) {
  constexpr int kMostExtra = 8;
  // The split rows, longest kernels first (plan order among equals): the two-level plans below
  // give the first `a` of them one count of extra shares and the rest another.
  std::vector<std::size_t> split;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].shares > 0) split.push_back(i);
  }
  if (split.empty()) return;
  std::stable_sort(split.begin(), split.end(),
                   [&](std::size_t a, std::size_t b) { return rows[a].time.kernel_s > rows[b].time.kernel_s; });
  const std::vector<RowPlan> least = rows;
  // Each extra share costs a job's setup: at most a tenth more runner time than the least.
  const double most_runner_s = 1.1 * runner_seconds(least);
  const auto plan_of = [&](const std::vector<int>& extra) {
    std::vector<RowPlan> plan = least;
    for (std::size_t k = 0; k < split.size(); ++k) plan[split[k]].shares += extra[k];
    return plan;
  };
  // Each choice of extra shares (a count per split row) tried once: when its graph ends and its
  // runner time; none when it breaks a limit (ci.max_entries in the first stage, the runner time).
  struct Timed {
    double graph_s = 0;
    double runner_s = 0;
  };
  std::map<std::vector<int>, std::optional<Timed>> tried;
  const auto timed = [&](const std::vector<int>& extra) -> std::optional<Timed> {
    const auto [slot, fresh] = tried.try_emplace(extra);
    if (!fresh) return slot->second;
    const std::vector<RowPlan> plan = plan_of(extra);
    int entries = 0;  // the first stage's matrix: every share job and the rows built whole
    for (const RowPlan& r : plan) entries += r.shares > 0 ? r.shares : 1;
    const double runner_s = runner_seconds(plan);
    const bool least_plan = std::all_of(extra.begin(), extra.end(), [](int e) { return e == 0; });
    if (least_plan || (entries <= ci.max_entries && runner_s <= most_runner_s)) {
      slot->second = Timed{graph_seconds(plan, ci.max_parallel), runner_s};
    }
    return slot->second;
  };
  const std::size_t n = split.size();
  std::vector<int> at(n, 0);
  double soonest = timed(at)->graph_s;
  const auto consider = [&](const std::vector<int>& extra) {
    if (const auto t = timed(extra); t && t->graph_s < soonest - 1) {
      at = extra;
      soonest = t->graph_s;
      return true;
    }
    return false;
  };
  // Two levels: the longest rows at one count, the others at another (so that a last wave of
  // short share jobs can fill the runners the long ones leave); every row alike among them.
  const std::size_t step = std::max<std::size_t>(1, n / 16);
  for (int high = 0; high <= kMostExtra; ++high) {
    for (int low = 0; low <= kMostExtra; ++low) {
      for (std::size_t a = 0; a <= n; a += step) {
        std::vector<int> extra(n, low);
        std::fill(extra.begin(), extra.begin() + static_cast<std::ptrdiff_t>(a), high);
        consider(extra);
      }
    }
  }
  // Then one row at a time, to any count, while the graph ends sooner.
  for (int pass = 0; pass < 3; ++pass) {
    bool better = false;
    for (std::size_t k = 0; k < n; ++k) {
      for (int extra = 0; extra <= kMostExtra; ++extra) {
        std::vector<int> e = at;
        e[k] = extra;
        better = consider(e) || better;
      }
    }
    if (!better) break;
  }
  // Kept: the least runner time among the plans within 1 % of the soonest end.
  const std::vector<int>* kept = nullptr;
  double kept_runner_s = 0;
  for (const auto& [extra, t] : tried) {
    if (t && t->graph_s <= 1.01 * soonest && (kept == nullptr || t->runner_s < kept_runner_s)) {
      kept = &extra;
      kept_runner_s = t->runner_s;
    }
  }
  rows = plan_of(*kept);
}

}  // namespace fabuild
