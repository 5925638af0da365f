#pragma once

// A ProcessSupervisor that runs nothing, for tests of the engine and the app above it: it
// records what would start, and ends processes when the test says so. Each "process" writes one
// output file into its staging directory when it starts, as a build would (`on_start` may write
// something else, e.g. a real wheel).

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "util/process.h"

namespace fabuild::test {

using std::chrono::milliseconds;

inline std::string env_value(const ProcessSpec& spec, const std::string& key) {
  for (const auto& e : spec.env) {
    if (e.rfind(key + "=", 0) == 0) return e.substr(key.size() + 1);
  }
  return {};
}

// Runs nothing: records what would start, and ends processes when the test says so. Each
// "process" writes one output file into its staging directory when it starts, as a build would.
class FakeSupervisor : public ProcessSupervisor {
 public:
  Id start(const ProcessSpec& spec) override {
    const Id id = next_++;
    specs[id] = spec;
    running_ids.push_back(id);
    const std::string out = env_value(spec, "FABUILD_OUT_DIR");
    if (!out.empty())
      std::ofstream(std::filesystem::path(out) / (env_value(spec, "FABUILD_CELL_ID") + ".whl")) << "wheel";
    if (on_start) on_start(id, spec);
    return id;
  }
  std::vector<std::pair<Id, ExitStatus>> wait(milliseconds max_wait) override {
    ++waits;
    if (running_ids.empty() && pending_cancels.empty() && interrupt_at_wait.count(waits) == 0) {
      // Only in-process steps are running: wait for one to say it is done, as the real one does.
      std::unique_lock<std::mutex> lock(wake_mutex_);
      wake_cv_.wait_for(lock, std::min(max_wait, milliseconds(5000)), [this] { return woken_; });
      woken_ = false;
      return {};
    }
    if (interrupt_at_wait.count(waits) != 0) {
      ++interrupts_;
      return {};
    }
    std::vector<std::pair<Id, ExitStatus>> done;
    if (!pending_cancels.empty()) {
      for (Id id : pending_cancels) done.emplace_back(id, ExitStatus{ExitStatus::Kind::kCancelled, 0, SIGTERM});
      for (Id id : pending_cancels) std::erase(running_ids, id);
      pending_cancels.clear();
      return done;
    }
    if (running_ids.empty()) return done;
    const std::size_t k = pick ? pick(running_ids.size()) : 0;
    const Id id = running_ids[k];
    running_ids.erase(running_ids.begin() + static_cast<std::ptrdiff_t>(k));
    const std::string cell = env_value(specs[id], "FABUILD_CELL_ID");
    ExitStatus s;
    if (failing.count(cell) != 0 || failing_ids.count(id) != 0 ||
        (!specs[id].argv.empty() && failing_programs.count(specs[id].argv[0]) != 0)) {
      s.code = 1;
    }
    done.emplace_back(id, s);
    return done;
  }
  void cancel_all(milliseconds grace) override {
    cancel_graces.push_back(grace);
    pending_cancels = running_ids;
  }
  void cancel(Id id, milliseconds) override {
    if (std::find(running_ids.begin(), running_ids.end(), id) == running_ids.end()) return;
    cancelled_ids.push_back(id);
    pending_cancels.push_back(id);
  }
  void wake() override {
    {
      const std::lock_guard<std::mutex> lock(wake_mutex_);
      woken_ = true;
    }
    wake_cv_.notify_one();
  }
  std::size_t running() const override { return running_ids.size(); }
  int interrupt_signal() const override { return interrupts_ > 0 ? SIGINT : 0; }
  int interrupt_count() const override { return interrupts_; }

  std::map<Id, ProcessSpec> specs;
  std::vector<Id> running_ids;
  std::vector<Id> pending_cancels;
  std::vector<Id> cancelled_ids;           // cancel(id) asked for these
  std::set<std::string> failing;           // cells whose every process fails
  std::set<Id> failing_ids;                // processes that fail
  std::set<std::string> failing_programs;  // processes of these argv[0] that fail
  std::set<int> interrupt_at_wait;
  std::vector<milliseconds> cancel_graces;
  std::function<std::size_t(std::size_t)> pick;
  std::function<void(Id, const ProcessSpec&)> on_start;
  int waits = 0;

 private:
  Id next_ = 1;
  int interrupts_ = 0;
  std::mutex wake_mutex_;
  std::condition_variable wake_cv_;
  bool woken_ = false;
};

}  // namespace fabuild::test
