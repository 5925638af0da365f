#pragma once

// One memory and core budget shared by every running cell (docs/budget.md). The scheduler
// decides which cells run at once and each one's MAX_JOBS; it runs no process itself, so the
// engine, the plan (--dry-run) and the tests drive the same decisions.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "engine/budget.h"

namespace fabuild {

// The fewest jobs a cell is given while others share the budget (see fair_jobs).
constexpr int kMinJobsPerCell = 4;

// What one cell asks of the budget.
struct Demand {
  double cost = 1;                          // expected cost; the most expensive cells start first
  double gb_per_job = kDefaultGbPerThread;  // memory of one compile job
  int threads_per_job = 1;                  // working nvcc threads of one job: its cores
  std::optional<int> max_jobs;              // the matrix's cap
  // A cell that must be past its compile first (release() or finish(), any outcome): the first
  // cell of a row of Python tags, whose compiled kernels the others take from the object cache. Meanwhile this one does
  // not count as sharing the budget, so the first gets what it would get alone; afterwards it is light (one
  // Python-specific unit to compile) and its fair share has no floor of kMinJobsPerCell.
  std::optional<std::size_t> after = std::nullopt;
};

// A cell the scheduler starts now, and with how many jobs.
struct Grant {
  std::size_t cell = 0;  // index into the demands
  int max_jobs = 1;
  std::string note;  // why it got fewer jobs than it asked for, if it did
};

class Scheduler {
 public:
  Scheduler(const Budget& budget, std::vector<Demand> demands);

  // The cells to start now. Together with the running ones they never use more memory or
  // cores than the budget, with one exception that keeps the build going: when nothing runs,
  // the next cell starts even if one job does not fit, at MAX_JOBS=1, and the note says so.
  // A cell waits rather than start with less than its fair share while others run.
  std::vector<Grant> start_more();
  // A started cell is past its compile (Step::releases_share): its share returns to the budget
  // and the cells that come after it may start, while it finishes its light steps.
  void release(std::size_t cell);
  // A released cell needs its share again (it goes back to its compile): it waits at the head
  // of the queue and is granted like a cell not yet started. Its followers stay started.
  void requeue(std::size_t cell);
  // A started cell ended (any outcome): its share returns to the budget.
  void finish(std::size_t cell);
  // Start nothing more (cancellation, --fail-fast).
  void stop();

  [[nodiscard]] std::size_t running() const { return running_.size(); }
  [[nodiscard]] std::size_t pending() const { return pending_.size(); }
  [[nodiscard]] std::size_t released() const { return released_; }
  [[nodiscard]] bool done() const { return running_.empty() && pending_.empty() && released_ == 0; }
  [[nodiscard]] double used_gb() const;
  [[nodiscard]] double used_cores() const;
  [[nodiscard]] const Budget& budget() const { return budget_; }

 private:
  struct Running {
    std::size_t cell;
    int jobs;
  };
  [[nodiscard]] int fair_jobs(const Demand& d) const;
  [[nodiscard]] bool waits(std::size_t cell) const;  // for a cell it must come after
  void end_compile(std::size_t cell);

  Budget budget_;
  std::vector<Demand> demands_;
  std::deque<std::size_t> pending_;  // most expensive first
  std::vector<Running> running_;
  // Kept as cells start and end, so that a matrix of 100 000 cells plans in linear time.
  std::vector<bool> ended_;
  std::vector<std::vector<std::size_t>> followers_;  // by the cell they come after
  std::size_t waiting_ = 0;                          // pending cells whose `after` has not ended
  std::vector<bool> released_cells_;                 // past their compile, not yet finished
  std::size_t released_ = 0;
};

}  // namespace fabuild
