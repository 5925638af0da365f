#include "app/compile_follower.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <vector>

#include <fmt/format.h>

#include "objcache/store.h"
#include "remote/sync.h"

namespace fabuild {

namespace {

constexpr std::chrono::seconds kPushBudget{60};  // per batch; what is left goes with the next

// The time left knowing the slots (compile_follower.h); none where it has too little to go by.
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
  double all_spent = 0;
  for (const double s : spent) all_spent += s;
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
  for (const double s : spent) free.push(std::max(unit - s, 0.1 * unit));
  for (std::size_t i = spent.size(); i < slots; ++i) free.push(0);
  for (std::size_t i = spent.size(); i < to_compile; ++i) {
    const double at = free.top() + unit;
    free.pop();
    free.push(at);
  }
  double last = 0;
  while (!free.empty()) {
    last = std::max(last, free.top());
    free.pop();
  }
  return last;
}

}  // namespace

CellProgress compile_progress(const CompileClock& c) {
  CellProgress p;
  if (c.total == 0) {
    if (c.done > 0) p.text = fmt::format("{} unit{} compiled", c.done, c.done == 1 ? "" : "s");
    return p;
  }
  p.text = fmt::format("{}/{} units", std::min(c.done, c.total), c.total);
  const double fraction = c.total_cost > 0 ? std::min(1.0, c.done_cost / c.total_cost) : 0;
  p.tenths = static_cast<int>(fraction * 10);
  if (c.done_cost <= 0 || fraction >= 1 || c.elapsed_s < 1) return p;
  std::optional<double> left_s;
  if (c.slots > 0) {
    left_s = left_by_slots(c);
  } else {
    left_s = c.elapsed_s * (c.total_cost - c.done_cost) / c.done_cost;
  }
  if (left_s) p.text += *left_s < 60 ? ", <1 min left" : fmt::format(", ~{:.0f} min left", *left_s / 60);
  return p;
}

CompileFollower::CompileFollower(FollowSettings settings) : s_(std::move(settings)) {}

CompileFollower::~CompileFollower() { stop(); }

void CompileFollower::start(std::map<std::string, double> expected) {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  expected_ = std::move(expected);
  stopping_ = false;
  started_ = s_.clock();
  thread_ = std::thread([this] { loop(); });
}

void CompileFollower::stop() {
  {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CompileFollower::loop() {
  for (;;) {
    read_more();
    std::unique_lock lock(mutex_);
    if (stopping_) return;
    wake_.wait_for(lock, s_.period, [this] { return stopping_; });
    if (stopping_) {
      lock.unlock();
      read_more();  // what the last compiles wrote
      return;
    }
  }
}

void CompileFollower::read_more() {
  CacheTally now = s_.compiles->read_new();
  const auto read_at = s_.clock();
  std::vector<std::pair<std::string, std::string>> fresh;
  {
    std::lock_guard lock(mutex_);
    // A cell that goes back to its build (app/probation_steps.h) starts its tally again: all of
    // the new one is fresh, and its compiles' times count from now.
    if (now.sources.size() < seen_.sources.size()) {
      ended_s_.clear();
      started_ = read_at;
    }
    const double at = std::chrono::duration<double>(read_at - started_).count();
    seen_ = std::move(now);
    for (const auto& compiled : seen_.costs) {
      if (expected_.contains(compiled.source)) ended_s_.try_emplace(compiled.source, at);
    }
    if (sent_ > seen_.objects.size()) sent_ = 0;
    fresh.assign(seen_.objects.begin() + static_cast<std::ptrdiff_t>(sent_), seen_.objects.end());
    sent_ = seen_.objects.size();
  }
  if (!s_.remote || remote_down_ || fresh.empty()) return;
  const objcache::Store local(s_.cache_dir);
  const remote::SyncTally t =
      remote::push_row(*s_.remote, local, s_.row_key, s_.writer, fresh, kPushBudget, {}, s_.trust.get());
  pushed_ += t.objects;
  pushed_bytes_ += t.bytes;
  if (!t.notes.empty()) {
    std::lock_guard lock(mutex_);
    remote_down_ = true;  // the push step at the end tries once more
    notes_.insert(notes_.end(), t.notes.begin(), t.notes.end());
  }
}

std::size_t CompileFollower::expected_units() const {
  std::lock_guard lock(mutex_);
  return expected_.size();
}

CellProgress CompileFollower::progress(int slots) const {
  std::lock_guard lock(mutex_);
  if (!thread_.joinable() && seen_.sources.empty()) return {};
  CompileClock c;
  c.total = expected_.size();
  c.slots = slots;
  c.elapsed_s = std::chrono::duration<double>(s_.clock() - started_).count();
  for (const auto& [unit, cost] : expected_) c.total_cost += cost;
  for (const auto& source : seen_.sources) {
    const auto it = expected_.find(source);
    if (it == expected_.end()) continue;
    c.done_cost += it->second;
    ++c.done;
  }
  if (expected_.empty()) c.done = seen_.sources.size();
  for (const auto& [unit, ended] : ended_s_) {
    c.compiled_ended_s.push_back(ended);
    c.compiled_cost += expected_.at(unit);
  }
  return compile_progress(c);
}

std::vector<std::string> CompileFollower::notes() const {
  std::lock_guard lock(mutex_);
  return notes_;
}

}  // namespace fabuild
