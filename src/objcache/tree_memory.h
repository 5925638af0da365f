#pragma once

// What a compile really holds: the resident memory of a process and all its descendants at
// once, at its highest. nvcc with --threads N runs N device stages (cicc, ptxas) side by side;
// wait4's ru_maxrss names only the largest single process, so a recorded peak from it undercounts
// such a compile up to N times, and the memory gate (memory_gate.h) would admit too much beside it.
//
// A thread samples the tree every 25 ms (util/processes.h, resident_kb_with_descendants: /proc)
// until stopped. Where /proc cannot say, it samples nothing and the caller keeps ru_maxrss.
// Windows needs none of this: a Job Object counts its processes together (spawn_win32.cpp,
// PeakJobMemoryUsed).

#include <cstdint>
#include <memory>

namespace fabuild::objcache {

class TreeMemory {
 public:
  // Starts sampling the tree under `pid` (a child of this process, not yet waited for).
  explicit TreeMemory(int pid);
  ~TreeMemory();
  TreeMemory(const TreeMemory&) = delete;
  TreeMemory& operator=(const TreeMemory&) = delete;

  // Stops sampling; the highest sum seen, in kB (0 when nothing was sampled).
  std::uint64_t stop();

 private:
  struct Sampler;
  std::unique_ptr<Sampler> sampler_;
};

}  // namespace fabuild::objcache
