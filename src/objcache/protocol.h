#pragma once

// The protocol between fabuild and fabuild-cc (docs/architecture.md, "The wrapper protocol"):
// fabuild starts each build with these variables set, fabuild-cc reads them (read_wrapper_env,
// compile_cache.h) and appends one tally line per compile to the file kTally names, which
// fabuild reads back as the build goes (app/object_cache.h's CellCompiles). The variables, the
// staging files and the tally line's fields are named here and nowhere else.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabuild::objcache {

// The variables fabuild sets for fabuild-cc.
namespace wrapper_env {
inline constexpr const char* kDir = "FABUILD_CC_DIR";             // the local object cache
inline constexpr const char* kCxx = "FABUILD_CC_CXX";             // what fabuild-c++ stands for
inline constexpr const char* kTally = "FABUILD_CC_TALLY";         // where each compile's line goes
inline constexpr const char* kDebug = "FABUILD_CC_DEBUG";         // "1": say why each compile missed
inline constexpr const char* kShare = "FABUILD_CC_SHARE";         // a compile share's split (share.h)
inline constexpr const char* kBaseDir = "FABUILD_CC_BASEDIR";     // the cell's staging directory (normal_form.h)
inline constexpr const char* kEnvDir = "FABUILD_CC_ENVDIR";       // the cell's Python environment (normal_form.h)
inline constexpr const char* kGate = "FABUILD_CC_GATE";           // the memory gate's directory (memory_gate.h)
inline constexpr const char* kMemoryMb = "FABUILD_CC_MEMORY_MB";  // ...its grant
inline constexpr const char* kSlots = "FABUILD_CC_SLOTS";         // ...its compiles at once
inline constexpr const char* kPeaks = "FABUILD_CC_PEAKS";         // ...the units' recorded peaks
inline constexpr std::string_view kPrefix = "FABUILD_CC_";        // a CI runner passes none of them on
}  // namespace wrapper_env

// The files in a cell's staging directory that the two share.
inline constexpr const char* kTallyFile = ".objcache.tally";
inline constexpr const char* kGateDir = ".objcache.gate";
inline constexpr const char* kPeaksFile = ".objcache.peaks";

// One compile, as fabuild-cc appends it to the tally: tab-separated, one line, in this order.
// An older fabuild-cc wrote fewer fields: the keys (5, 6), the costs (7-9), the gate's wait
// (10) and how busy the machine was (11) are optional when read.
struct TallyLine {
  std::string outcome;  // hit, miss, uncacheable, error, placeholder (compile_cache.h's Outcome)
  std::uint64_t bytes = 0;
  std::string source;
  std::string detail;                                     // why it was not a hit; tabs and newlines as spaces
  std::string manifest_key, result_key;                   // "" when none
  std::optional<std::uint64_t> wall_ms, cpu_ms, peak_kb;  // a real compile's cost
  std::int64_t gate_wait_ms = -1;                         // -1: not under the memory gate
  int busy_pct = -1;  // how busy the machine was while it compiled, 0-100 (spawn.h); -1: unknown
};

std::string write_tally_line(const TallyLine& line);  // with its newline
// nullopt for a line that is not one (fewer than two fields, a size that is no number).
std::optional<TallyLine> parse_tally_line(std::string_view text);

}  // namespace fabuild::objcache
