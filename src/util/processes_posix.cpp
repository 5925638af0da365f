#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <sstream>

#include "util/processes.h"
#include "util/read_whole.h"

namespace fabuild {

namespace {

// The value of `name` in /proc/<pid>/environ ("" when unset or unreadable).
std::string environment_value(const std::string& pid, const std::string& name) {
  const auto env = read_whole("/proc/" + pid + "/environ");
  if (!env) return {};
  const std::string key = name + "=";
  std::size_t at = 0;
  while (at < env->size()) {
    const std::size_t end = std::min(env->find('\0', at), env->size());
    const std::string_view entry(env->data() + at, end - at);
    if (entry.starts_with(key)) return std::string(entry.substr(key.size()));
    at = end + 1;
  }
  return {};
}

std::uint64_t resident_kb(const std::string& pid) {
  std::istringstream statm(read_whole("/proc/" + pid + "/statm").value_or(""));
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (!(statm >> size >> resident)) return 0;
  static const auto page_kb = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
  return resident * page_kb;
}

// The children of every thread of `pid`.
std::vector<std::string> children_of(const std::string& pid) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/" + pid + "/task", ec), end; !ec && it != end; it.increment(ec)) {
    std::istringstream children(read_whole(it->path() / "children").value_or(""));
    for (std::string child; children >> child;) out.push_back(child);
  }
  return out;
}

}  // namespace

long current_pid() { return static_cast<long>(::getpid()); }

bool process_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH); }

bool kill_process(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0; }

std::vector<long> processes_with_environment(const std::string& name, const std::string& prefix) {
  std::vector<long> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* e = ::readdir(proc)) {
    const std::string entry = e->d_name;
    if (entry.empty() || entry.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(entry);
    if (pid == current_pid()) continue;
    if (environment_value(entry, name).rfind(prefix, 0) == 0) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

std::uint64_t resident_kb_with_descendants(long pid) {
  std::uint64_t kb = 0;
  std::vector<std::string> pending{std::to_string(pid)};
  // A tree, so each process once; the bound only guards against a /proc that says otherwise.
  for (std::size_t seen = 0; !pending.empty() && seen < 4096; ++seen) {
    const std::string p = pending.back();
    pending.pop_back();
    kb += resident_kb(p);
    for (auto& child : children_of(p)) pending.push_back(std::move(child));
  }
  return kb;
}

}  // namespace fabuild
