#pragma once

// The memory gate (docs/performance.md, "The memory gate"): a cell's compiles start while their
// own recorded peaks fit in the memory the scheduler granted the cell, instead of MAX_JOBS slots
// each sized for the largest kernel. fabuild sets, for a cell whose row has recorded costs:
// (the variables objcache/protocol.h names)
//   wrapper_env::kGate      a directory of the cell's, where each running compile holds a lease
//   wrapper_env::kMemoryMb  the cell's grant
//   wrapper_env::kSlots     the most compiles at once (the cores granted over NVCC_THREADS); absent
//                           or 0: no cap but the memory
//   wrapper_env::kPeaks     a file of "<MB>\t<seconds>\t<absolute source path>" lines, one per
//                           recorded unit (its peak and its recorded CPU seconds), and
//                           "<MB>\t<seconds>\t*" for the units it has no record of
// Before a compile it cannot take from the cache, fabuild-cc waits for its turn. The gate is the
// cell's scheduler: MAX_JOBS lets ninja hand it more compiles than run at once (a window), and of
// the compiles waiting, the first in (recorded seconds, longest first; then arrival) whose peak
// fits beside the leases held starts, while fewer than wrapper_env::kSlots run. A longer compile
// that does not fit lets a shorter one that does go first (backfill); one compile alone always
// goes. Simulated on FlashAttention's units against strict arrival order: docs/performance.md.
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
#include <vector>

namespace fabuild::objcache {

// wrapper_env::kPeaks' contents: MB by absolute source path, and for units not named.
struct UnitPeaks {
  std::map<std::string, std::uint64_t> mb;
  std::map<std::string, std::uint64_t> seconds;  // recorded CPU seconds: the gate's priority
  std::uint64_t other_mb = 0;
  std::uint64_t other_seconds = 0;
  [[nodiscard]] std::uint64_t of(const std::string& source) const;
  [[nodiscard]] std::uint64_t seconds_of(const std::string& source) const;
};
std::optional<UnitPeaks> parse_unit_peaks(const std::string& text);  // nullopt: not such a file
std::string write_unit_peaks(const UnitPeaks& peaks);

struct GateSpec {
  std::string dir;              // wrapper_env::kGate; "" = no gate
  std::uint64_t budget_mb = 0;  // wrapper_env::kMemoryMb
  int slots = 0;                // wrapper_env::kSlots; 0 = no cap
  std::string peaks_file;       // wrapper_env::kPeaks
};

// One compile asking the gate.
struct GateRequest {
  std::uint64_t budget_mb = 0;
  std::uint64_t need_mb = 0;
  int slots = 0;               // 0: no cap
  std::uint64_t priority = 0;  // recorded seconds: longer goes first
};

// What the gate's directory holds: the live leases, and the compiles waiting (each a ticket).
struct GateTicket {
  std::string name;  // sorts by arrival
  std::uint64_t need_mb = 0;
  std::uint64_t priority = 0;
};
struct GateState {
  std::uint64_t held_mb = 0;
  int leases = 0;
  std::vector<GateTicket> waiting;
};

// The gate's rule, on a snapshot: whether `me` (one of `state.waiting`, or not yet there) starts
// now. Fewer than `slots` leases, and `me` is the first of the waiting, by priority then
// arrival, whose need fits beside the held (any fits when none is held).
bool gate_admits(const GateState& state, const GateTicket& me, const GateRequest& request);

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

  // Blocks until gate_admits says so (see above); throws std::runtime_error when the directory
  // cannot be used. `waited_ms`: how long it waited.
  static MemoryLease acquire(const std::string& dir, const GateRequest& request, std::uint64_t* waited_ms = nullptr);
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
