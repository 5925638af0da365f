#include "engine/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

namespace fabuild {

namespace {

int whole(double x) { return x <= 0 ? 0 : static_cast<int>(std::floor(x + 1e-9)); }

}  // namespace

Scheduler::Scheduler(const Budget& budget, std::vector<Demand> demands)
    : budget_(budget), demands_(std::move(demands)) {
  std::vector<std::size_t> order(demands_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return demands_[a].cost > demands_[b].cost; });
  pending_.assign(order.begin(), order.end());
  ended_.assign(demands_.size(), false);
  released_cells_.assign(demands_.size(), false);
  followers_.resize(demands_.size());
  for (std::size_t i = 0; i < demands_.size(); ++i) {
    auto& after = demands_[i].after;
    if (after && (*after >= demands_.size() || *after == i)) after.reset();  // no such cell: nothing to wait for
    if (after) {
      followers_[*after].push_back(i);
      ++waiting_;
    }
  }
}

double Scheduler::used_gb() const {
  double gb = 0;
  for (const auto& r : running_) gb += r.jobs * demands_[r.cell].gb_per_job;
  return gb;
}

double Scheduler::used_cores() const {
  double cores = 0;
  for (const auto& r : running_) cores += r.jobs * demands_[r.cell].threads_per_job;
  return cores;
}

// The cell's share if the budget were split evenly between the cells that run at once: as
// many as there are, but not so many that each gets fewer than kMinJobsPerCell jobs — many
// cells at MAX_JOBS=1 finish nothing for hours, while a few cells at several jobs each keep
// the cores busy through each other's serial steps (setup, linking, packaging).
int Scheduler::fair_jobs(const Demand& d) const {
  const int capacity = std::min(whole(budget_.memory_gb / d.gb_per_job), whole(budget_.cores / d.threads_per_job));
  std::size_t sharing = running_.size() + pending_.size() - waiting_;
  if (budget_.max_cells > 0) sharing = std::min<std::size_t>(sharing, static_cast<std::size_t>(budget_.max_cells));
  // A cell that came after the first of its row takes its kernels from the object cache: it
  // compiles one Python-specific unit and packages, so several at a job or two each keep the
  // cores busy where one at four jobs would leave most of them idle.
  if (!d.after)
    sharing = std::min<std::size_t>(sharing, static_cast<std::size_t>(std::max(1, capacity / kMinJobsPerCell)));
  sharing = std::max<std::size_t>(sharing, 1);
  const int by_memory = whole(budget_.memory_gb / static_cast<double>(sharing) / d.gb_per_job);
  const int by_cores = whole(budget_.cores / static_cast<double>(sharing) / d.threads_per_job);
  return std::max(1, std::min(by_memory, by_cores));
}

bool Scheduler::waits(std::size_t cell) const {
  const auto& after = demands_[cell].after;
  return after && !ended_[*after];
}

std::vector<Grant> Scheduler::start_more() {
  std::vector<Grant> grants;
  while (!pending_.empty()) {
    // max_cells counts cells finishing their light steps too: it is the user's limit on cells.
    if (budget_.max_cells > 0 && running_.size() + released_ >= static_cast<std::size_t>(budget_.max_cells)) break;
    const auto next = std::find_if(pending_.begin(), pending_.end(), [&](std::size_t c) { return !waits(c); });
    if (next == pending_.end()) break;  // each waits for a running cell
    const std::size_t cell = *next;
    const Demand& d = demands_[cell];
    const int cap = d.max_jobs.value_or(std::numeric_limits<int>::max());
    const int free_by_memory = whole((budget_.memory_gb - used_gb()) / d.gb_per_job);
    const int free_by_cores = whole((budget_.cores - used_cores()) / d.threads_per_job);
    const int fits = std::min(free_by_memory, free_by_cores);
    const int want = std::min(cap, fair_jobs(d));

    Grant g{cell, std::min(want, fits), {}};
    if (!running_.empty() && g.max_jobs < want) break;  // wait for a fair share to come free
    if (g.max_jobs < 1) {
      g.max_jobs = 1;
      g.note = fmt::format(
          "the budget ({:.1f} GB, {:g} cores) holds less than one job ({:.1f} GB, {} cores); "
          "running MAX_JOBS=1 anyway",
          budget_.memory_gb, budget_.cores, d.gb_per_job, d.threads_per_job);
    } else if (d.max_jobs && *d.max_jobs > g.max_jobs) {
      g.note = fmt::format(
          "max_jobs {} -> {}: {} jobs x {:.1f} GB = {:.0f} GB; the budget holds {:.1f} GB and {:g} cores", *d.max_jobs,
          g.max_jobs, *d.max_jobs, d.gb_per_job, *d.max_jobs * d.gb_per_job, budget_.memory_gb, budget_.cores);
    }
    pending_.erase(next);
    running_.push_back({cell, g.max_jobs});
    grants.push_back(std::move(g));
  }
  return grants;
}

void Scheduler::release(std::size_t cell) {
  const auto before = running_.size();
  std::erase_if(running_, [&](const Running& r) { return r.cell == cell; });
  if (running_.size() == before) return;  // not running, or released already
  released_cells_[cell] = true;
  ++released_;
  end_compile(cell);
}

void Scheduler::requeue(std::size_t cell) {
  if (cell >= released_cells_.size() || !released_cells_[cell]) return;
  released_cells_[cell] = false;
  --released_;
  pending_.push_front(cell);
}

void Scheduler::finish(std::size_t cell) {
  std::erase_if(running_, [&](const Running& r) { return r.cell == cell; });
  if (cell < released_cells_.size() && released_cells_[cell]) {
    released_cells_[cell] = false;
    --released_;
  }
  end_compile(cell);
}

// Its compiled objects are in the cache (or it failed): the cells that came after it may start.
void Scheduler::end_compile(std::size_t cell) {
  if (cell >= ended_.size() || ended_[cell]) return;
  ended_[cell] = true;
  // Its followers are all still pending: they could not start before it ended.
  waiting_ -= std::min(waiting_, followers_[cell].size());
}

void Scheduler::stop() {
  pending_.clear();
  waiting_ = 0;
}

}  // namespace fabuild
