// The memory gate on Windows: not there (memory_gate.h). fabuild sets no gate for a Windows
// cell; a compile told of one anyway goes at once, holding nothing.

#include "objcache/memory_gate.h"

namespace fabuild::objcache {

MemoryLease::~MemoryLease() = default;

MemoryLease MemoryLease::acquire(const std::string&, const GateRequest&, std::uint64_t* waited_ms) {
  if (waited_ms != nullptr) *waited_ms = 0;
  return MemoryLease{};
}

std::uint64_t MemoryLease::held_mb(const std::string&) { return 0; }

}  // namespace fabuild::objcache
