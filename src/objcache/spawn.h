#pragma once

// Running the real compiler: to completion with its output captured (a miss, whose output is
// stored and then replayed), or in place of fabuild-cc itself (a command the cache leaves
// alone: its output, exit status and signals are the compiler's own).
//
// POSIX (spawn_posix.cpp): posix_spawn and execv. Windows (spawn_win32.cpp): CreateProcessW,
// the child in a Job Object of the wrapper's so that its CPU time counts nvcc's stages too; a
// Windows program cannot be replaced by another, so "in place of" is: run it with fabuild-cc's
// own standard handles, wait, and exit with its exit code.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fabuild::objcache {

struct Captured {
  int exit_code = 0;  // 128+N when killed by signal N; 127 when it could not start
  std::string out;
  std::string err;
  // What it cost, for the row's recorded unit costs (docs/ci.md): wall time, CPU time of it and
  // its children (nvcc's cicc, ptxas...), and the most memory they held at once (tree_memory.h;
  // on Windows the Job Object's peak).
  std::uint64_t wall_ms = 0;
  std::uint64_t cpu_ms = 0;
  std::uint64_t peak_kb = 0;
  // How busy the machine's processors were while it ran, all of them and every process on the
  // machine (not the compile's cgroup or container alone: what slows a compile is the cores,
  // caches and memory it shares), 0 (idle) to 1 (every processor busy): the row's record keeps
  // it so that a plan knows how loaded the machine that measured a cost was (costs/contention.h).
  // nullopt where the system does not say.
  std::optional<double> host_busy;
  [[nodiscard]] bool ok() const { return exit_code == 0; }
};

// `program` (a path) with `argv` and this process's environment. stdout and stderr go to
// `<temp>.out` and `<temp>.err` (removed afterwards): the compiler's output may be large.
Captured run_captured(const std::string& program, const std::vector<std::string>& argv,
                      const std::filesystem::path& temp);

// execv(program, argv); prints why and exits 127 if that fails.
[[noreturn]] void exec_compiler(const std::string& program, const std::vector<std::string>& argv);

// Writes all of `bytes` to a file descriptor (1 or 2), retrying short writes.
void write_all(int fd, const std::string& bytes);

// Appends `line` to the file at `path` (made if missing) in one write, so that the lines of
// concurrent compiles do not interleave (O_APPEND; Windows: FILE_APPEND_DATA). Errors are ignored.
void append_line(const std::string& path, const std::string& line);

// The machine's processor time so far, every processor together: busy (not idle) and in all, in
// the system's own unit (/proc/stat's ticks; GetSystemTimes' 100 ns). nullopt where it cannot be
// read. Two readings give how busy the machine was between them (busy_between).
struct HostCpu {
  std::uint64_t busy = 0, total = 0;
};
std::optional<HostCpu> host_cpu();
inline std::optional<double> busy_between(const std::optional<HostCpu>& before, const std::optional<HostCpu>& after) {
  if (!before || !after || after->total <= before->total || after->busy < before->busy) return std::nullopt;
  const double busy =
      static_cast<double>(after->busy - before->busy) / static_cast<double>(after->total - before->total);
  return busy > 1 ? 1.0 : busy;
}

// This program's own file ("" if unknown): a compiler found to be it is refused.
std::string own_program();

// A file's modification time and the clock it is read against, in nanoseconds since the epoch:
// st_mtim and CLOCK_REALTIME; on Windows FILETIME's 100 ns steps (GetFileAttributesExW and
// GetSystemTimePreciseAsFileTime), not the whole seconds std::filesystem gives there.
// nullopt when the file cannot be read.
std::optional<std::int64_t> modified_ns(const std::string& path);
std::int64_t now_ns();

}  // namespace fabuild::objcache
