// What fabuild-cc reads of its environment (objcache/protocol.h's names) and what it reports of
// each compile: the gate's lease and the tally line (compile_cache.h declares them).
#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "objcache/compile_cache.h"
#include "objcache/protocol.h"
#include "objcache/spawn.h"
#include "util/file.h"

namespace fabuild::objcache {

namespace {

// Variables that change what gcc or nvcc produce, beyond the command line.
constexpr const char* kKeyVariables[] = {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "CPATH",
                                         "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH", "GCC_EXEC_PREFIX",
                                         "COMPILER_PATH", "SOURCE_DATE_EPOCH", "LANG", "LC_ALL", "LC_CTYPE",
                                         "LC_MESSAGES",
                                         // cl.exe's, nvcc's host compiler on Windows: its header
                                         // directories and options it adds to every command.
                                         "INCLUDE", "CL", "_CL_"};

}  // namespace

WrapperEnv read_wrapper_env(const char* const* variables) {
  WrapperEnv env;
  std::set<std::string> seen;  // the first of a name counts, as for getenv(3)
  for (const char* const* e = variables; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string name(entry.substr(0, eq));
    const std::string value(entry.substr(eq + 1));
    if (!seen.insert(name).second) continue;
    namespace v = wrapper_env;
    if (name == v::kDir) env.cache_dir = value;
    if (name == v::kCxx) env.cxx = value;
    if (name == v::kTally) env.tally = value;
    if (name == v::kDebug) env.debug = value == "1";
    if (name == "PATH") env.path = value;
    if (name == "NVCC_CCBIN") env.ccbin = value;
    if (name == v::kShare) env.share = value;
    if (name == v::kBaseDir) env.base_dir = value;
    if (name == v::kEnvDir) env.env_dir = value;
    if (name == v::kGate) env.gate.dir = value;
    if (name == v::kMemoryMb) env.gate.budget_mb = std::strtoull(value.c_str(), nullptr, 10);
    if (name == v::kSlots) env.gate.slots = static_cast<int>(std::strtol(value.c_str(), nullptr, 10));
    if (name == v::kPeaks) env.gate.peaks_file = value;
    for (const char* k : kKeyVariables) {
      if (name == k) env.key_env.emplace_back(name, value);
    }
  }
  std::sort(env.key_env.begin(), env.key_env.end());
  return env;
}

MemoryLease enter_gate(const WrapperEnv& env, const std::string& source, CompileReport& report) {
  std::uint64_t waited = 0;
  std::string note;
  MemoryLease lease = enter_gate(env.gate, source, &waited, &note);
  if (!env.gate.dir.empty()) report.gate_wait_ms = static_cast<std::int64_t>(waited);
  if (!note.empty()) report.detail += "; " + note;
  return lease;
}

std::string to_string(Outcome o) {
  switch (o) {
    case Outcome::kHit:
      return "hit";
    case Outcome::kMiss:
      return "miss";
    case Outcome::kUncacheable:
      return "uncacheable";
    case Outcome::kError:
      return "error";
    case Outcome::kPlaceholder:
      return "placeholder";
  }
  return "?";
}

void append_tally(const std::string& tally, const CompileReport& report, const std::string& source) {
  if (tally.empty()) return;
  const TallyLine line{to_string(report.outcome),
                       report.bytes,
                       source,
                       report.detail,
                       report.manifest_key,
                       report.result_key,
                       report.wall_ms,
                       report.cpu_ms,
                       report.peak_kb,
                       report.gate_wait_ms,
                       report.busy_pct};
  append_line(tally, write_tally_line(line));  // one write: lines of concurrent compiles do not interleave
}

}  // namespace fabuild::objcache
