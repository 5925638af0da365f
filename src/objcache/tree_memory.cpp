#include "objcache/tree_memory.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "util/processes.h"

namespace fabuild::objcache {

namespace {

// Often enough for a compile's stages (seconds each), rarely enough to cost nothing.
constexpr auto kEvery = std::chrono::milliseconds(25);

}  // namespace

struct TreeMemory::Sampler {
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::uint64_t peak_kb = 0;
  std::thread thread;
};

TreeMemory::TreeMemory(int pid) : sampler_(std::make_unique<Sampler>()) {
  Sampler* s = sampler_.get();
  s->thread = std::thread([s, pid] {
    std::unique_lock lock(s->mutex);
    while (!s->stopping) {
      lock.unlock();
      const std::uint64_t kb = resident_kb_with_descendants(pid);
      lock.lock();
      if (kb > s->peak_kb) s->peak_kb = kb;
      s->wake.wait_for(lock, kEvery, [s] { return s->stopping; });
    }
  });
}

TreeMemory::~TreeMemory() { stop(); }

std::uint64_t TreeMemory::stop() {
  {
    std::lock_guard lock(sampler_->mutex);
    sampler_->stopping = true;
  }
  sampler_->wake.notify_all();
  if (sampler_->thread.joinable()) sampler_->thread.join();
  return sampler_->peak_kb;
}

}  // namespace fabuild::objcache
