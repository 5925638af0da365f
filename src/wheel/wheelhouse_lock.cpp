#include "wheel/wheelhouse_lock.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/host_info.h"
#include "util/processes.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

UserError lock_error(const fs::path& path, const std::runtime_error& e) {
  return UserError(kExitCellFailed, Location{path.string()}, e.what(),
                   "check that the wheelhouse directory is writable");
}

std::string now_utc() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

// The holder as the file says, read a few times when it names a process that is gone on this
// host: a new holder may have taken the lock and not yet written its name over the last one's.
LockHolder current_holder(const fs::path& wheelhouse) {
  LockHolder h;
  for (int i = 0; i < 20; ++i) {
    h = read_lock_holder(wheelhouse);
    if (h.pid != 0 && (h.host != host_name() || process_alive(h.pid))) break;
    std::this_thread::sleep_for(10ms);
  }
  return h;
}

}  // namespace

std::string LockHolder::describe() const {
  if (pid == 0) return "another process (it has not said which)";
  std::string text = fmt::format("pid {} on {} since {}", pid, host.empty() ? "?" : host, since.empty() ? "?" : since);
  if (!command.empty()) text += fmt::format(" ({})", command);
  return text;
}

LockHolder read_lock_holder(const fs::path& wheelhouse) {
  LockHolder h;
  std::ifstream in(wheelhouse / kWheelhouseLockName);
  const json doc = json::parse(in, nullptr, false);
  if (!doc.is_object()) return h;
  h.pid = doc.value("pid", 0L);
  h.host = doc.value("host", "");
  h.since = doc.value("since", "");
  h.command = doc.value("command", "");
  return h;
}

WheelhouseLock::WheelhouseLock(const fs::path& wheelhouse, const std::string& command, bool wait,
                               const std::function<void(const LockHolder&)>& waiting) {
  std::error_code ec;
  fs::create_directories(wheelhouse, ec);
  const fs::path path = wheelhouse / kWheelhouseLockName;
  try {
    file_ = File(path, File::Mode::kReadWrite);
    bool said = false;
    while (!file_.try_lock()) {
      if (!wait) {
        const LockHolder holder = current_holder(wheelhouse);
        throw UserError(kExitWheelhouseBusy, Location{wheelhouse.string()},
                        fmt::format("another fabuild is building into this wheelhouse: {}", holder.describe()),
                        "wait for it to finish (or stop it), run again with --wait-lock to queue behind it, "
                        "or build into another directory with -o");
      }
      if (!said && waiting) waiting(current_holder(wheelhouse));
      said = true;
      std::this_thread::sleep_for(200ms);
    }
    // Ours now: say who we are for whoever is refused next.
    file_.truncate();
    file_.write(json{{"pid", current_pid()}, {"host", host_name()}, {"since", now_utc()}, {"command", command}}.dump() +
                "\n");
  } catch (const UserError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw lock_error(path, e);
  }
}

WheelhouseLock::~WheelhouseLock() = default;  // closing the file releases the lock

}  // namespace fabuild
