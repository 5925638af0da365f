#include "app/compile_follower.h"

#include <fmt/format.h>

#include "objcache/store.h"
#include "remote/sync.h"

namespace fabuild {

namespace {

constexpr std::chrono::seconds kPushBudget{60};  // per batch; what is left goes with the next

}  // namespace

CellProgress compile_progress(std::size_t done, std::size_t total, double done_cost, double total_cost,
                              std::chrono::seconds elapsed) {
  CellProgress p;
  if (total == 0) {
    if (done > 0) p.text = fmt::format("{} unit{} compiled", done, done == 1 ? "" : "s");
    return p;
  }
  p.text = fmt::format("{}/{} units", std::min(done, total), total);
  const double fraction = total_cost > 0 ? std::min(1.0, done_cost / total_cost) : 0;
  p.tenths = static_cast<int>(fraction * 10);
  if (done_cost > 0 && fraction < 1 && elapsed.count() > 0) {
    const double left_s = static_cast<double>(elapsed.count()) * (total_cost - done_cost) / done_cost;
    p.text += left_s < 60 ? ", <1 min left" : fmt::format(", ~{:.0f} min left", left_s / 60);
  }
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
  std::vector<std::pair<std::string, std::string>> fresh;
  {
    std::lock_guard lock(mutex_);
    seen_ = std::move(now);
    // A cell that goes back to its build (app/probation_steps.h) starts its tally again: all of
    // the new one is fresh.
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

CellProgress CompileFollower::progress() const {
  std::lock_guard lock(mutex_);
  if (!thread_.joinable() && seen_.sources.empty()) return {};
  double done_cost = 0;
  double total_cost = 0;
  for (const auto& [unit, cost] : expected_) total_cost += cost;
  std::size_t done = 0;
  for (const auto& source : seen_.sources) {
    const auto it = expected_.find(source);
    if (it == expected_.end()) continue;
    done_cost += it->second;
    ++done;
  }
  if (expected_.empty()) done = seen_.sources.size();
  const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(s_.clock() - started_);
  return compile_progress(done, expected_.size(), done_cost, total_cost, elapsed);
}

std::vector<std::string> CompileFollower::notes() const {
  std::lock_guard lock(mutex_);
  return notes_;
}

}  // namespace fabuild
