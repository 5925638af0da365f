#include "util/holder_lock.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "util/host_info.h"
#include "util/processes.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

std::string now_utc() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

Expected<File> open_lock_file(const fs::path& file) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  return File::open(file, File::Mode::kReadWrite);
}

// Ours now: say who we are for whoever is turned away next.
Expected<void> sign(File& file, const std::string& what) {
  return file.truncate().and_then([&] {
    return file.write(
        json{{"pid", current_pid()}, {"host", host_name()}, {"since", now_utc()}, {"command", what}}.dump() + "\n");
  });
}

}  // namespace

std::string LockHolder::describe() const {
  if (pid == 0) return "another process (it has not said which)";
  std::string text = fmt::format("pid {} on {} since {}", pid, host.empty() ? "?" : host, since.empty() ? "?" : since);
  if (!what.empty()) text += fmt::format(" ({})", what);
  return text;
}

Expected<std::optional<HolderLock>> HolderLock::try_take(const fs::path& file, const std::string& what) {
  Expected<File> f = open_lock_file(file);
  if (!f) return tl::make_unexpected(f.error());
  const Expected<bool> locked = f->try_lock();
  if (!locked) return tl::make_unexpected(locked.error());
  if (!*locked) return std::optional<HolderLock>();
  if (auto signed_ = sign(*f, what); !signed_) return tl::make_unexpected(signed_.error());
  return std::optional<HolderLock>(HolderLock(std::move(*f)));
}

Expected<HolderLock> HolderLock::take(const fs::path& file, const std::string& what,
                                      const std::function<void(const LockHolder&)>& waiting) {
  Expected<File> f = open_lock_file(file);
  if (!f) return tl::make_unexpected(f.error());
  bool said = false;
  for (;;) {
    const Expected<bool> locked = f->try_lock();
    if (!locked) return tl::make_unexpected(locked.error());
    if (*locked) break;
    if (!said && waiting) waiting(current_lock_holder(file));
    said = true;
    std::this_thread::sleep_for(200ms);
  }
  if (auto signed_ = sign(*f, what); !signed_) return tl::make_unexpected(signed_.error());
  return HolderLock(std::move(*f));
}

LockHolder read_lock_holder_file(const fs::path& file) {
  LockHolder h;
  std::ifstream in(file);
  const json doc = json::parse(in, nullptr, false);
  if (!doc.is_object()) return h;
  h.pid = doc.value("pid", 0L);
  h.host = doc.value("host", "");
  h.since = doc.value("since", "");
  h.what = doc.value("command", "");
  return h;
}

LockHolder current_lock_holder(const fs::path& file) {
  LockHolder h;
  for (int i = 0; i < 20; ++i) {
    h = read_lock_holder_file(file);
    if (h.pid != 0 && (h.host != host_name() || process_alive(h.pid))) break;
    std::this_thread::sleep_for(10ms);
  }
  return h;
}

}  // namespace fabuild
