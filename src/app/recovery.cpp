#include "app/recovery.h"

#include <dirent.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include "util/text.h"
#include "wheel/filing.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// FABUILD_OUT_DIR of process `pid`, or "" (gone, not ours to read, or not a cell).
std::string out_dir_of(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/environ", std::ios::binary);
  const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::string_view kKey = "FABUILD_OUT_DIR=";
  for (std::size_t at = 0; at < env.size();) {
    const std::size_t end = std::min(env.find('\0', at), env.size());
    const std::string_view entry(env.data() + at, end - at);
    if (entry.starts_with(kKey)) return std::string(entry.substr(kKey.size()));
    at = end + 1;
  }
  return {};
}

// Processes whose FABUILD_OUT_DIR lies under `staging`: cells of an earlier run on this
// wheelhouse, orphaned when it died. Descendants inherit the variable, so a compiler a build
// tool started (even in its own session) is found as well.
std::vector<pid_t> leftover_cell_processes(const fs::path& staging) {
  std::vector<pid_t> found;
  const std::string prefix = staging.string() + "/";
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* e = ::readdir(proc)) {
    const std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid()) continue;
    if (out_dir_of(name).rfind(prefix, 0) == 0) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

// An AtomicFile's temporary: ".<name>.tmp.XXXXXX" (mkstemp's six characters).
bool is_atomic_temp(const std::string& name) {
  static const std::regex pattern(R"(^\..+\.tmp\.[A-Za-z0-9]{6}$)");
  return std::regex_match(name, pattern);
}

}  // namespace

bool Recovery::empty() const {
  return killed.empty() && staging_removed == 0 && temp_files_removed == 0 && filings_finished.empty();
}

std::string Recovery::describe() const {
  std::vector<std::string> parts;
  if (!killed.empty()) parts.push_back(fmt::format("killed {} leftover cell process{}", killed.size(), killed.size() == 1 ? "" : "es"));
  if (staging_removed > 0) {
    parts.push_back(fmt::format("removed {} staging director{}", staging_removed, staging_removed == 1 ? "y" : "ies"));
  }
  if (temp_files_removed > 0) {
    parts.push_back(fmt::format("removed {} unfinished temporary file{}", temp_files_removed, temp_files_removed == 1 ? "" : "s"));
  }
  if (!filings_finished.empty()) parts.push_back("finished filing " + join(filings_finished, ", "));
  return "recovered from an interrupted run: " + join(parts, "; ");
}

Recovery recover_wheelhouse(const fs::path& wheelhouse) {
  Recovery r;
  const fs::path staging = fs::absolute(wheelhouse / ".staging");
  // Twice: a leftover shell may start a child between the scan and its death.
  for (int round = 0; round < 2; ++round) {
    const std::vector<pid_t> pids = leftover_cell_processes(staging);
    for (pid_t pid : pids) {
      if (::kill(pid, SIGKILL) == 0 && round == 0) r.killed.push_back(pid);
    }
    if (pids.empty()) break;
    std::this_thread::sleep_for(50ms);
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(staging, ec)) {
    std::error_code removed;
    fs::remove_all(e.path(), removed);
    if (!removed) ++r.staging_removed;
  }
  fs::remove(staging, ec);
  for (auto it = fs::recursive_directory_iterator(wheelhouse, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec) && (name == "logs" || name == kFilingJournalDir)) {
      it.disable_recursion_pending();
      continue;
    }
    std::error_code removed;
    if (it->is_regular_file(ec) && is_atomic_temp(name) && fs::remove(it->path(), removed)) ++r.temp_files_removed;
  }
  r.filings_finished = finish_interrupted_filings(wheelhouse);
  return r;
}

}  // namespace fabuild
