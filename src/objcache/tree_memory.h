#pragma once

// What a compile really holds: the resident memory of a process and all its descendants at
// once, at its highest. nvcc with --threads N runs N device stages (cicc, ptxas) side by side;
// wait4's ru_maxrss names only the largest single process, so a recorded peak from it undercounts
// such a compile up to N times, and the memory gate (memory_gate.h) would admit too much beside it.
//
// Linux (tree_memory_posix.cpp): a thread samples the tree every few tens of milliseconds from
// /proc (each task's children, each process's statm) until stopped. Elsewhere, and where /proc
// lists no children, it samples nothing and the caller keeps ru_maxrss. Windows needs none of
// this: a Job Object counts its processes together (spawn_win32.cpp, PeakJobMemoryUsed).

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

// The resident kB of `pid` and its descendants now (0 when /proc cannot say).
std::uint64_t tree_resident_kb(int pid);

}  // namespace fabuild::objcache
