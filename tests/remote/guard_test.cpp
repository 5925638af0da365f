// The guard over a run's remote (remote/guard.h) on a store that fails when told to: dropped
// after three failures in a row or once the failures took the wait budget, never by failures a
// success came between, and a dropped remote is not asked again.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "remote/guard.h"

namespace fabuild::remote {
namespace {

using namespace std::chrono_literals;

class Scripted final : public Store {
 public:
  bool failing = false;
  std::chrono::milliseconds delay{0};
  int calls = 0;
  Expected<std::optional<std::string>> get(const std::string& key) override {
    if (!answer()) return fail("GET " + key + ": HTTP 503");
    return std::optional<std::string>("bytes");
  }
  Expected<bool> has(const std::string& key) override {
    if (!answer()) return fail("HEAD " + key + ": HTTP 503");
    return true;
  }
  Expected<void> put(const std::string& key, const std::string&) override {
    if (!answer()) return fail("PUT " + key + ": HTTP 503");
    return {};
  }
  [[nodiscard]] std::string where() const override { return "http://127.0.0.1:1/cache"; }

 private:
  bool answer() {
    ++calls;
    if (delay > 0ms) std::this_thread::sleep_for(delay);
    return !failing;
  }
};

TEST(Guard, ThreeFailuresInARowDropTheRemote) {
  auto inner = std::make_shared<Scripted>();
  GuardedStore guard(inner, GuardLimits{});
  inner->failing = true;
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(guard.has("k").has_value());
  EXPECT_TRUE(guard.dropped());
  inner->failing = false;  // back, but the run no longer asks
  const auto got = guard.get("k");
  ASSERT_FALSE(got.has_value());
  EXPECT_TRUE(is_dropped_note(got.error().what));
  EXPECT_NE(got.error().what.find("3 requests failed"), std::string::npos) << got.error().what;
  EXPECT_NE(got.error().what.find("HTTP 503"), std::string::npos) << got.error().what;
  EXPECT_EQ(inner->calls, 3);
}

TEST(Guard, ASuccessBetweenFailuresKeepsTheRemote) {
  auto inner = std::make_shared<Scripted>();
  GuardedStore guard(inner, GuardLimits{});
  for (int round = 0; round < 5; ++round) {
    inner->failing = true;
    (void)guard.put("k", "v");
    (void)guard.put("k", "v");
    inner->failing = false;
    EXPECT_TRUE(guard.put("k", "v").has_value());
  }
  EXPECT_FALSE(guard.dropped());
}

TEST(Guard, FailuresThatTookTheWaitBudgetDropTheRemote) {
  auto inner = std::make_shared<Scripted>();
  GuardedStore guard(inner, GuardLimits{100, 150ms});
  inner->failing = true;
  inner->delay = 100ms;
  EXPECT_FALSE(guard.get("k").has_value());
  EXPECT_FALSE(guard.dropped());
  EXPECT_FALSE(guard.get("k").has_value());
  EXPECT_TRUE(guard.dropped());
  EXPECT_FALSE(is_dropped_note("GET k: HTTP 503"));
}

}  // namespace
}  // namespace fabuild::remote
