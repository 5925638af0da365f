#pragma once

// A steady clock a test moves by hand: handed where System's steady_now goes (util/clock.h). It
// may be read from other threads (a compile follower's) while the test moves it.

#include <atomic>
#include <chrono>
#include <memory>

#include "util/clock.h"

namespace fabuild::test {

class FakeClock {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  // Reads this clock; the function may outlive the FakeClock.
  [[nodiscard]] SteadyNow now() const {
    return [at = at_] { return at->load(); };
  }
  void advance(std::chrono::milliseconds by) { at_->store(at_->load() + by); }

 private:
  std::shared_ptr<std::atomic<time_point>> at_ = std::make_shared<std::atomic<time_point>>(time_point{});
};

}  // namespace fabuild::test
