// The memory gate on Windows: not there (memory_gate.h). fabuild sets no gate for a Windows
// cell; a compile told of one anyway goes at once, holding nothing.

#include "objcache/memory_gate.h"

namespace fabuild::objcache {

MemoryLease::~MemoryLease() = default;

MemoryLease::MemoryLease(MemoryLease&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

MemoryLease& MemoryLease::operator=(MemoryLease&& other) noexcept {
  std::swap(fd_, other.fd_);
  std::swap(path_, other.path_);
  return *this;
}

MemoryLease MemoryLease::acquire(const std::string&, std::uint64_t, std::uint64_t, std::uint64_t* waited_ms) {
  if (waited_ms != nullptr) *waited_ms = 0;
  return MemoryLease{};
}

std::uint64_t MemoryLease::held_mb(const std::string&) { return 0; }

}  // namespace fabuild::objcache
