#include "wheel/wheelhouse_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

UserError lock_error(const fs::path& path, const std::string& doing, int err) {
  return UserError(kExitCellFailed, Location{path.string()}, fmt::format("cannot {}: {}", doing, std::strerror(err)),
                   "check that the wheelhouse directory is writable");
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

bool alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// The holder as the file says, read a few times when it names a process that is gone on this
// host: a new holder may have taken the lock and not yet written its name over the last one's.
LockHolder current_holder(const fs::path& wheelhouse) {
  LockHolder h;
  for (int i = 0; i < 20; ++i) {
    h = read_lock_holder(wheelhouse);
    if (h.pid != 0 && (h.host != host_name() || alive(h.pid))) break;
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
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw lock_error(path, "open the wheelhouse lock", errno);
  bool said = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EWOULDBLOCK) {
      ::close(fd_);
      throw lock_error(path, "lock the wheelhouse", err);
    }
    if (!wait) {
      const LockHolder holder = current_holder(wheelhouse);
      ::close(fd_);
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
  const std::string text = json{{"pid", static_cast<long>(::getpid())}, {"host", host_name()}, {"since", now_utc()},
                                {"command", command}}.dump() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    const int err = errno;
    ::close(fd_);
    throw lock_error(path, "write the wheelhouse lock", err);
  }
}

WheelhouseLock::~WheelhouseLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace fabuild
