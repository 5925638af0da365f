#include "engine/inline_steps.h"

#include <exception>
#include <string>
#include <utility>

namespace fabuild {

InlineSteps::~InlineSteps() {
  for (auto& [cell, thread] : threads_) thread.join();
}

void InlineSteps::start(std::size_t index, const CellRun& cell, const Step& step, Facts facts,
                        std::chrono::steady_clock::time_point cell_started) {
  threads_[index] = std::thread([this, index, &cell, &step, facts = std::move(facts), cell_started]() mutable {
    StepResult result;
    try {
      StepContext context{cell, facts, cell_started};
      result = step.run_inline(context);
    } catch (const std::exception& e) {
      result = tl::make_unexpected(std::string(e.what()));
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_.push_back(Done{index, std::move(result), std::move(facts)});
    }
    supervisor_.wake();
  });
}

std::vector<InlineSteps::Done> InlineSteps::collect() {
  std::vector<Done> done;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done.swap(done_);
  }
  for (const Done& d : done) {
    const auto it = threads_.find(d.cell);
    it->second.join();
    threads_.erase(it);
  }
  return done;
}

}  // namespace fabuild
