#include "remote/guard.h"

#include <fmt/format.h>

namespace fabuild::remote {

namespace {

constexpr const char* kDropped = "the remote was dropped for the rest of the run";

}  // namespace

bool is_dropped_note(const std::string& note) { return note.find(kDropped) != std::string::npos; }

bool GuardedStore::dropped() const {
  std::lock_guard lock(mutex_);
  return !dropped_.empty();
}

std::string GuardedStore::dropped_note() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

void GuardedStore::count(bool failed, std::chrono::steady_clock::duration took, const std::string& why) {
  std::lock_guard lock(mutex_);
  if (!failed) {
    in_a_row_ = 0;
    return;
  }
  ++failures_;
  ++in_a_row_;
  waited_ += took;
  if (!dropped_.empty()) return;
  const double waited_s = std::chrono::duration<double>(waited_).count();
  if (in_a_row_ >= limits_.max_failures || waited_ >= limits_.wait_budget) {
    dropped_ = fmt::format(
        "{} {}: {} request{} failed, {:.0f} s spent on failures (the last: {}); the cells compile "
        "without it",
        inner_->where(), kDropped, failures_, failures_ == 1 ? "" : "s", waited_s, why);
  }
}

template <class Call>
auto GuardedStore::guarded(Call call) -> decltype(call()) {
  {
    std::lock_guard lock(mutex_);
    if (!dropped_.empty()) return fail(dropped_);
  }
  const auto started = std::chrono::steady_clock::now();
  auto result = call();
  count(!result, std::chrono::steady_clock::now() - started, result ? std::string() : result.error().what);
  return result;
}

Expected<std::optional<std::string>> GuardedStore::get(const std::string& key) {
  return guarded([&] { return inner_->get(key); });
}

Expected<bool> GuardedStore::has(const std::string& key) {
  return guarded([&] { return inner_->has(key); });
}

Expected<void> GuardedStore::put(const std::string& key, const std::string& bytes) {
  return guarded([&] { return inner_->put(key, bytes); });
}

}  // namespace fabuild::remote
