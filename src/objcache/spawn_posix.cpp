#include "objcache/spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "objcache/store.h"
#include "objcache/tree_memory.h"

extern char** environ;

namespace fabuild::objcache {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

Captured run_captured(const std::string& program, const std::vector<std::string>& argv,
                      const std::filesystem::path& temp) {
  const std::string out_path = temp.string() + ".out";
  const std::string err_path = temp.string() + ".err";
  Captured c;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args = c_argv(argv);
  const auto started = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    c.exit_code = 127;
    c.err = "fabuild-cc: cannot run " + program + ": " + std::strerror(rc) + "\n";
    return c;
  }
  const std::optional<HostCpu> cpu_before = host_cpu();
  TreeMemory tree(pid);
  int status = 0;
  rusage usage = {};
  while (::wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      status = 127 << 8;
      break;
    }
  }
  const std::uint64_t tree_kb = tree.stop();
  c.host_busy = busy_between(cpu_before, host_cpu());
  c.wall_ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());
  const auto ms = [](const timeval& t) { return static_cast<std::uint64_t>(t.tv_sec) * 1000 + t.tv_usec / 1000; };
  // wait4's usage covers the child and the descendants it waited for: all of nvcc's stages.
  c.cpu_ms = ms(usage.ru_utime) + ms(usage.ru_stime);
  // ru_maxrss: the largest single process; the sampled tree: what they held at once (nvcc's
  // parallel stages). The larger, as a short-lived process may fall between samples.
  c.peak_kb = std::max(static_cast<std::uint64_t>(usage.ru_maxrss), tree_kb);
  c.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  c.out = read_whole(out_path).value_or("");
  c.err = read_whole(err_path).value_or("");
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return c;
}

void append_line(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) return;
  write_all(fd, line);
  ::close(fd);
}

std::string own_program() { return "/proc/self/exe"; }

std::optional<HostCpu> host_cpu() {
  // /proc/stat's first line: "cpu  user nice system idle iowait irq softirq steal ...", in ticks,
  // every processor of the machine (a container's or cgroup's view is the host's).
  std::ifstream in("/proc/stat");
  std::string line;
  if (!std::getline(in, line) || !line.starts_with("cpu ")) return std::nullopt;
  std::istringstream fields(line.substr(4));
  HostCpu cpu;
  std::uint64_t value = 0;
  for (int i = 0; i < 8 && fields >> value; ++i) {  // guest times are in user's already
    cpu.total += value;
    if (i != 3 && i != 4) cpu.busy += value;  // idle, iowait
  }
  if (cpu.total == 0) return std::nullopt;
  return cpu;
}

std::optional<std::int64_t> modified_ns(const std::string& path) {
  struct stat st = {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

std::int64_t now_ns() {
  timespec ts = {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void exec_compiler(const std::string& program, const std::vector<std::string>& argv) {
  std::vector<char*> args = c_argv(argv);
  ::execv(program.c_str(), args.data());
  std::fprintf(stderr, "fabuild-cc: cannot run %s: %s\n", program.c_str(), std::strerror(errno));
  std::_Exit(127);
}

}  // namespace fabuild::objcache
