#include "engine/workers.h"

#include <utility>

namespace fabuild {

Workers::~Workers() {
  for (auto& [cell, thread] : threads_) thread.join();
}

void Workers::start(std::size_t cell, std::function<void()> job) {
  threads_[cell] = std::thread([this, cell, job = std::move(job)] {
    job();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_.push_back(cell);
    }
    supervisor_.wake();
  });
}

std::vector<std::size_t> Workers::collect() {
  std::vector<std::size_t> done;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done.swap(done_);
  }
  for (std::size_t cell : done) {
    const auto it = threads_.find(cell);
    it->second.join();
    threads_.erase(it);
  }
  return done;
}

}  // namespace fabuild
