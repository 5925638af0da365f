#include "app/compile_follower.h"

#include "objcache/store.h"
#include "remote/sync.h"

namespace fabuild {

namespace {

constexpr std::chrono::seconds kPushBudget{60};  // per batch; what is left goes with the next

}  // namespace

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
    // the new one is fresh (its objects to send, its compiles' times counted from now), however
    // many lines the new build wrote before this read.
    if (now.restarts != seen_.restarts) {
      ended_s_.clear();
      started_ = read_at;
      sent_ = 0;
    }
    const double at = std::chrono::duration<double>(read_at - started_).count();
    seen_ = std::move(now);
    for (const auto& compiled : seen_.costs) {
      if (expected_.contains(compiled.source)) ended_s_.try_emplace(compiled.source, at);
    }
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
