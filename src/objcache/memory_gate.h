#pragma once

// The memory gate (docs/performance.md, "The memory gate"): a cell's compiles start while their
// own recorded peaks fit in the memory the scheduler granted the cell, instead of MAX_JOBS slots
// each sized for the largest kernel. fabuild sets, for a cell whose row has recorded costs:
//   FABUILD_CC_GATE       a directory of the cell's, where each running compile holds a lease
//   FABUILD_CC_MEMORY_MB  the cell's grant
//   FABUILD_CC_PEAKS      a file of "<MB>\t<absolute source path>" lines, one per recorded
//                         unit, and "<MB>\t*" for the units it has no record of
// Before a compile it cannot take from the cache, fabuild-cc waits until its unit's peak fits
// beside the leases held (one compile alone always goes), the longest waiting first.
//
// A lease is a file holding its MB, locked (flock) by the compile's process and inherited by the
// compiler it runs: it is held exactly as long as some process of that compile lives, and the
// system drops it however they end. Files of dead leases are removed by the next compile that
// looks. Admission is decided under the directory's lock (util/dir_lock.h).
//
// POSIX only: on Windows (memory_gate_win32.cpp) every compile goes at once, as fabuild sets no
// gate for a Windows cell (its MAX_JOBS is 1 unless the matrix says otherwise).

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace fabuild::objcache {

// FABUILD_CC_PEAKS' contents: MB by absolute source path, and for units not named.
struct UnitPeaks {
  std::map<std::string, std::uint64_t> mb;
  std::uint64_t other_mb = 0;
  [[nodiscard]] std::uint64_t of(const std::string& source) const;
};
std::optional<UnitPeaks> parse_unit_peaks(const std::string& text);  // nullopt: not such a file
std::string write_unit_peaks(const UnitPeaks& peaks);

struct GateSpec {
  std::string dir;              // FABUILD_CC_GATE; "" = no gate
  std::uint64_t budget_mb = 0;  // FABUILD_CC_MEMORY_MB
  std::string peaks_file;       // FABUILD_CC_PEAKS
};

// A compile's place under the gate, held for the object's lifetime (and by the processes that
// inherit it). Not copyable; movable.
class MemoryLease {
 public:
  MemoryLease() = default;
  ~MemoryLease();
  MemoryLease(MemoryLease&& other) noexcept;
  MemoryLease& operator=(MemoryLease&& other) noexcept;
  MemoryLease(const MemoryLease&) = delete;
  MemoryLease& operator=(const MemoryLease&) = delete;

  // Blocks until `need_mb` fits (see above); throws std::runtime_error when the directory
  // cannot be used. `waited_ms`: how long it waited.
  static MemoryLease acquire(const std::string& dir, std::uint64_t budget_mb, std::uint64_t need_mb,
                             std::uint64_t* waited_ms = nullptr);
  // The MB the live leases of `dir` hold (for tests and the log).
  static std::uint64_t held_mb(const std::string& dir);

 private:
  int fd_ = -1;
  std::string path_;
};

// The lease for compiling `source` (absolute) under `gate`: an empty lease when there is no gate;
// a unit's peak from the peaks file (a file that cannot be read: the whole budget, so it runs
// alone). Never throws: a gate that cannot be used lets the compile go, with why in `note`.
MemoryLease enter_gate(const GateSpec& gate, const std::string& source, std::uint64_t* waited_ms, std::string* note);

}  // namespace fabuild::objcache
