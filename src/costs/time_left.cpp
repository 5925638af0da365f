#include "costs/time_left.h"

#include <algorithm>
#include <numeric>
#include <queue>

#include <fmt/format.h>

namespace fabuild {

namespace {

// How much of the expected cost is done, 0-1.
double done_fraction(const CompileClock& c) { return c.total_cost > 0 ? std::min(1.0, c.done_cost / c.total_cost) : 0; }

// The time left knowing the slots; none where it has too little to go by.
std::optional<double> left_by_slots(const CompileClock& c) {
  const std::size_t finished = c.compiled_ended_s.size();
  const auto slots = static_cast<std::size_t>(std::max(c.slots, 0));
  if (slots == 0 || c.done >= c.total || c.compiled_cost <= 0 || finished < std::max<std::size_t>(2, (slots + 3) / 4)) {
    return std::nullopt;
  }
  const std::size_t to_compile = c.total - c.done;
  // Each slot's first compile started at 0, each later one at an end: the finished ones took
  // the earliest starts, the running ones the latest.
  std::vector<double> starts(slots, 0.0);
  starts.insert(starts.end(), c.compiled_ended_s.begin(), c.compiled_ended_s.end());
  std::sort(starts.begin(), starts.end());
  starts.resize(std::min(finished + to_compile, slots + finished));
  double busy = 0;  // the slot-time the finished units took
  for (const double ended : c.compiled_ended_s) busy += ended;
  for (std::size_t i = 0; i < finished; ++i) busy -= starts[i];
  std::vector<double> spent;  // by each running one
  for (std::size_t i = finished; i < starts.size(); ++i) spent.push_back(std::max(0.0, c.elapsed_s - starts[i]));
  const double all_spent = std::accumulate(spent.begin(), spent.end(), 0.0);
  // The seconds a unit of cost takes: the finished units' say, but at least what they and the
  // running ones say together (a running compile costs at least its time so far: early on, the
  // finished ones are the cheap ones).
  const double mean_left = (c.total_cost - c.done_cost) / static_cast<double>(to_compile);
  const double per_cost = std::max(
      busy / c.compiled_cost, (busy + all_spent) / (c.compiled_cost + static_cast<double>(spent.size()) * mean_left));
  const double unit = per_cost * mean_left;
  if (unit <= 0) return std::nullopt;
  // When each slot frees: a running compile after a unit's time less what it spent; then the
  // units not started, each on the first slot free, as ninja hands them out.
  std::priority_queue<double, std::vector<double>, std::greater<>> free;
  double last = 0;  // when the last one ends
  for (const double s : spent) {
    const double ends = std::max(unit - s, 0.1 * unit);
    free.push(ends);
    last = std::max(last, ends);
  }
  for (std::size_t i = spent.size(); i < slots; ++i) free.push(0);
  for (std::size_t i = spent.size(); i < to_compile; ++i) {
    const double at = free.top() + unit;
    free.pop();
    free.push(at);
    last = std::max(last, at);
  }
  return last;
}

}  // namespace

std::optional<double> time_left_s(const CompileClock& c) {
  if (c.total == 0 || c.done_cost <= 0 || done_fraction(c) >= 1 || c.elapsed_s < 1) return std::nullopt;
  if (c.slots > 0) return left_by_slots(c);
  return c.elapsed_s * (c.total_cost - c.done_cost) / c.done_cost;
}

CellProgress compile_progress(const CompileClock& c) {
  CellProgress p;
  if (c.total == 0) {
    if (c.done > 0) p.text = fmt::format("{} unit{} compiled", c.done, c.done == 1 ? "" : "s");
    return p;
  }
  p.text = fmt::format("{}/{} units", std::min(c.done, c.total), c.total);
  p.tenths = static_cast<int>(done_fraction(c) * 10);
  if (const auto left_s = time_left_s(c))
    p.text += *left_s < 60 ? ", <1 min left" : fmt::format(", ~{:.0f} min left", *left_s / 60);
  return p;
}

}  // namespace fabuild
