// The memory gate's leases on POSIX: flock(2) on one file per lease (memory_gate.h).

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "objcache/memory_gate.h"
#include "objcache/spawn.h"
#include "util/dir_lock.h"
#include "util/read_whole.h"

namespace fabuild::objcache {

namespace fs = std::filesystem;

namespace {

// Names sort by arrival: "<kind>-<20-digit ns>-<pid>". "l": a lease; "w": a compile waiting.
std::string entry_name(char kind) {
  char stamp[21];
  std::snprintf(stamp, sizeof stamp, "%020lld", static_cast<long long>(now_ns()));
  return std::string(1, kind) + "-" + stamp + "-" + std::to_string(::getpid());
}

// Made and locked; `inherit`: kept open across exec and posix_spawn (a lease: the compiler holds
// it too), else closed there (a waiting ticket).
int make_locked(const std::string& path, const std::string& contents, bool inherit) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | (inherit ? 0 : O_CLOEXEC), 0644);
  if (fd < 0) throw std::runtime_error("cannot make " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 ||
      ::write(fd, contents.data(), contents.size()) != static_cast<ssize_t>(contents.size())) {
    const int e = errno;
    ::close(fd);
    ::unlink(path.c_str());
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(e));
  }
  return fd;
}

// Whether some process still holds the entry's lock; a dead one's file is removed.
bool live(const fs::path& entry) {
  const int fd = ::open(entry.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  if (!held) ::unlink(entry.c_str());
  ::close(fd);
  return held;
}

// Under the directory's lock: the live leases and the live waiting tickets ("<MB> <priority>").
GateState scan(const fs::path& dir) {
  GateState s;
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
  for (const fs::path& e : entries) {
    const std::string name = e.filename().string();
    const bool lease = name.starts_with("l-");
    if ((!lease && !name.starts_with("w-")) || !live(e)) continue;
    const auto text = read_whole(e.string());
    char* end = nullptr;
    const std::uint64_t mb = text ? std::strtoull(text->c_str(), &end, 10) : 0;
    if (lease) {
      s.held_mb += mb;
      ++s.leases;
    } else {
      s.waiting.push_back({name, mb, end != nullptr ? std::strtoull(end, nullptr, 10) : 0});
    }
  }
  return s;
}

}  // namespace

MemoryLease::~MemoryLease() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

MemoryLease MemoryLease::acquire(const std::string& dir_name, const GateRequest& request, std::uint64_t* waited_ms) {
  const fs::path dir(dir_name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const auto started = std::chrono::steady_clock::now();
  // A waiting ticket, made once this compile has had to wait; a lease object too, so that it
  // goes however this returns (admitted, or an error).
  MemoryLease ticket;
  auto pause = std::chrono::milliseconds(20);
  for (;;) {
    {
      const DirectoryLock lock(dir);
      // With no ticket of its own yet, every live one is older ('~' sorts after the digits).
      const GateTicket me{ticket.path_.empty() ? std::string("w-~") : fs::path(ticket.path_).filename().string(),
                          request.need_mb, request.priority};
      if (gate_admits(scan(dir), me, request)) {
        MemoryLease lease;
        lease.path_ = (dir / entry_name('l')).string();
        lease.fd_ = make_locked(lease.path_, std::to_string(request.need_mb) + "\n", true);
        if (waited_ms != nullptr) {
          *waited_ms = static_cast<std::uint64_t>(
              std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
                  .count());
        }
        return lease;
      }
      if (ticket.path_.empty()) {
        ticket.path_ = (dir / entry_name('w')).string();
        ticket.fd_ = make_locked(
            ticket.path_, std::to_string(request.need_mb) + " " + std::to_string(request.priority) + "\n", false);
      }
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
}

std::uint64_t MemoryLease::held_mb(const std::string& dir) {
  const DirectoryLock lock{fs::path(dir)};
  return scan(fs::path(dir)).held_mb;
}

}  // namespace fabuild::objcache
