#include "objcache/tree_memory.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fabuild::objcache {

namespace {

// Often enough for a compile's stages (seconds each), rarely enough to cost nothing.
constexpr auto kEvery = std::chrono::milliseconds(25);

std::uint64_t resident_kb(int pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (!(statm >> size >> resident)) return 0;
  static const auto page_kb = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
  return resident * page_kb;
}

// The children of every thread of `pid` (/proc/PID/task/TID/children, Linux 3.5+ with
// CONFIG_PROC_CHILDREN, which Debian's, Ubuntu's and GitHub's runner kernels have).
std::vector<int> children_of(int pid) {
  std::vector<int> out;
  const std::string task = "/proc/" + std::to_string(pid) + "/task/";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(task, ec), end; !ec && it != end; it.increment(ec)) {
    std::ifstream children(it->path() / "children");
    for (int child = 0; children >> child;) out.push_back(child);
  }
  return out;
}

}  // namespace

std::uint64_t tree_resident_kb(int pid) {
  std::uint64_t kb = 0;
  std::vector<int> todo{pid};
  // A tree, so each process once; the bound only guards against a /proc that says otherwise.
  for (std::size_t seen = 0; !todo.empty() && seen < 4096; ++seen) {
    const int p = todo.back();
    todo.pop_back();
    kb += resident_kb(p);
    for (int child : children_of(p)) todo.push_back(child);
  }
  return kb;
}

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
      const std::uint64_t kb = tree_resident_kb(pid);
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
