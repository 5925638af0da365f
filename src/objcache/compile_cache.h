#pragma once

// One cacheable compile, ccache's direct mode done for cells that differ in where things are:
//
//   key      = SHA-256 of the compiler's identity (and nvcc's host compiler's), the command line
//              in normal form (normal_form.h), the variables that change what a compiler does,
//              the working directory where it matters, and the source's content;
//   manifest = for that key, each earlier compile's headers (recorded path, SHA-256) from its
//              depfile, and which shadowing names existed then;
//   hit      = some entry whose every header has that content here and whose names resolve
//              as they did: its result (object, stdout, stderr) is written out, with a depfile
//              for this compile's paths;
//   miss     = the real compile, with -MD so that its depfile names every header; then the
//              object, its output and a manifest entry are stored.
//
// The cache never fails a build: a problem with it (unreadable, full disk) is reported in the
// tally and the compiler's own result stands.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "objcache/command_line.h"
#include "objcache/memory_gate.h"
#include "objcache/store.h"
#include "util/expected.h"

namespace fabuild::objcache {

// What fabuild-cc reads from its environment (docs/performance.md).
struct WrapperEnv {
  std::string cache_dir;  // wrapper_env::kDir; "" = no cache: the compiler runs as it is
  std::string cxx;        // wrapper_env::kCxx: what fabuild-c++ stands for; "" = c++
  std::string tally;      // wrapper_env::kTally: one line per compile is appended here
  bool debug = false;     // wrapper_env::kDebug "1": say on stderr why each compile missed
  std::string path;       // PATH, to find compilers
  std::string ccbin;      // NVCC_CCBIN
  std::string share;      // wrapper_env::kShare: a compile share's split (share.h); "" = compile everything
  std::string base_dir;   // wrapper_env::kBaseDir: the cell's staging directory, mapped out of debug compiles
  std::string env_dir;    // wrapper_env::kEnvDir: the cell's Python environment (torch's headers), mapped too
  GateSpec gate;          // wrapper_env::kGate, kMemoryMb, kSlots, kPeaks (memory_gate.h)
  // Variables that change what a compiler produces (NVCC_APPEND_FLAGS, CPATH, ...), set ones only.
  std::vector<std::pair<std::string, std::string>> key_env;
};
WrapperEnv read_wrapper_env(const char* const* variables);

// kPlaceholder: a unit of another compile share (share.h), stood in for by a placeholder object.
enum class Outcome { kHit, kMiss, kUncacheable, kError, kPlaceholder };
std::string to_string(Outcome o);  // "hit", "miss", "uncacheable", "error", "placeholder"

struct CompileReport {
  Outcome outcome = Outcome::kMiss;
  std::uint64_t bytes = 0;  // hit: the object's size; miss: what was stored
  std::string detail;       // why it missed, or was not cached
  // The manifest and result it used (hit) or stored (miss); "" otherwise. fabuild sends these
  // to the remote tier (app/remote_cache.h), which needs no network inside a build.
  std::string manifest_key;
  std::string result_key;
  // What the real compile cost (a miss, or an uncacheable compile that ran); 0 otherwise.
  std::uint64_t wall_ms = 0, cpu_ms = 0, peak_kb = 0;
  // How busy the machine was while it compiled, in percent (spawn.h's host_busy); -1: unknown.
  int busy_pct = -1;
  // Under a memory gate (memory_gate.h): how long the compile waited to start; -1: no gate.
  std::int64_t gate_wait_ms = -1;
};

// Appends the compile's line (protocol.h's TallyLine) to `tally` in one write ("" = nowhere).
// `source` is absolute.
void append_tally(const std::string& tally, const CompileReport& report, const std::string& source);

// The memory gate's lease for compiling `source` (memory_gate.h's enter_gate, under env.gate),
// with how long it waited, and why there was none if the gate could not be used, in `report`.
MemoryLease enter_gate(const WrapperEnv& env, const std::string& source, CompileReport& report);

class CompileCache {
 public:
  // `compiler`: as the build named it (argv[0] for the real compile); `program`: its path.
  CompileCache(const WrapperEnv& env, std::string compiler, std::string program);

  // Runs `cmd` (cacheable) in `cwd` from the cache or through the compiler; the compiler's
  // output reaches stdout and stderr either way. Returns the exit code.
  int compile(const CompileCommand& cmd, const std::string& cwd, CompileReport& report);

  // A unit of another compile share that the cache does not hold: a placeholder object (and
  // depfile) at the compile's output, made by the host compiler from a one-line source that
  // carries kPlaceholderMark; nothing is stored. Returns the exit code.
  int placeholder(const CompileCommand& cmd, const std::string& cwd, const std::string& why, CompileReport& report);
  // Whether the cache holds this compile's object: a hit, replayed (`report` says so).
  bool try_hit(const CompileCommand& cmd, const std::string& cwd, CompileReport& report);

 private:
  // The store's layout made; throws what Store::prepare could not do.
  void prepare_store() const;
  std::string key_of(const CompileCommand& cmd, const class NormalForm& nf, const std::string& source_hash);
  // The key of `cmd`; throws when its source cannot be read.
  std::string key_for(const CompileCommand& cmd, const class NormalForm& nf);
  // Replays the first manifest entry that still describes this compile; else false, with why
  // in report.detail.
  bool lookup(const CompileCommand& cmd, const class NormalForm& nf, const std::string& key, CompileReport& report);
  // Whether `entry` still describes this compile: its headers unchanged, none shadowed; if not, why.
  Expected<void> matches(const ManifestEntry& entry, const class NormalForm& nf);
  static void replay(const CompileCommand& cmd, const class NormalForm& nf, const ManifestEntry& entry,
                     const Result& result, CompileReport& report);
  int compile_and_store(const CompileCommand& cmd, const class NormalForm& nf, const std::string& key,
                        CompileReport& report);
  std::string file_hash(const std::string& path);  // "" when unreadable; memoised per process

  const WrapperEnv& env_;
  std::string compiler_;
  std::string program_;
  Store store_;
  std::unordered_map<std::string, std::string> hashes_;  // path -> hex ("" unreadable)
};

}  // namespace fabuild::objcache
