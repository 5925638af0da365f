#pragma once

// A remote that fails the run once is likely to fail it again: the guard counts its failures
// across every cell of a run and drops it for the rest of the run after `max_failures` requests
// in a row failed, or once the failed requests together took `wait_budget` (docs/performance.md,
// "Sharing the cache between machines"). A dropped remote answers every call at once with a
// Failure that says so (is_dropped_note), so each cell compiles locally without waiting; what
// a request costs at most is the store's own Limits (a stalled transfer: `stall`).

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "remote/store.h"

namespace fabuild::remote {

struct GuardLimits {
  int max_failures = 3;
  std::chrono::milliseconds wait_budget{std::chrono::seconds(60)};
};

class GuardedStore final : public Store {
 public:
  GuardedStore(std::shared_ptr<Store> inner, GuardLimits limits) : inner_(std::move(inner)), limits_(limits) {}

  Expected<std::optional<std::string>> get(const std::string& key) override;
  Expected<bool> has(const std::string& key) override;
  Expected<void> put(const std::string& key, const std::string& bytes) override;
  [[nodiscard]] std::string where() const override { return inner_->where(); }

  [[nodiscard]] bool dropped() const;
  // What a dropped remote answers with (where, how many requests failed, the last failure's
  // words); "" while it is used.
  [[nodiscard]] std::string dropped_note() const;

 private:
  template <class Call>
  auto guarded(Call call) -> decltype(call());
  void count(bool failed, std::chrono::steady_clock::duration took, const std::string& why);

  std::shared_ptr<Store> inner_;
  GuardLimits limits_;
  mutable std::mutex mutex_;
  int in_a_row_ = 0;
  int failures_ = 0;
  std::chrono::steady_clock::duration waited_{};
  std::string dropped_;  // the note a dropped remote answers with; "" while it is used
};

// Whether a note is a dropped remote's answer.
bool is_dropped_note(const std::string& note);

}  // namespace fabuild::remote
