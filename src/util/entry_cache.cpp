#include "util/entry_cache.h"

#include <algorithm>
#include <vector>

#include "util/entry_lock.h"
#include "util/file.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

struct Entry {
  fs::path path;
  fs::file_time_type used;
  std::uint64_t bytes = 0;
};

}  // namespace

void mark_used(const fs::path& entry) { set_last_write_time(entry, fs::file_time_type::clock::now()); }

EntryCacheReport trim_entry_cache(const fs::path& dir, const EntryCacheLimits& limits, fs::file_time_type now) {
  EntryCacheReport report;
  std::vector<Entry> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.front() == '.') continue;
    std::error_code te;
    const auto used = fs::last_write_time(e.path(), te);
    if (te) continue;
    entries.push_back({e.path(), used, bytes_under(e.path())});
  }
  // Oldest first: the order in which they go.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  std::uint64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  const auto remove = [&](const Entry& e) {
    const auto held = EntryRemoval::try_take(e.path);  // none that a live run makes or uses
    if (!held) return false;
    std::error_code re;
    fs::remove_all(e.path, re);
    if (re) return false;
    ++report.removed;
    report.removed_bytes += e.bytes;
    total -= e.bytes;
    return true;
  };
  std::vector<bool> gone(entries.size(), false);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto age = now - entries[i].used;
    if (age < limits.keep_recent) continue;
    const bool too_old = limits.max_age.count() > 0 && age > limits.max_age;
    const bool too_big = limits.max_bytes > 0 && total > limits.max_bytes;
    if ((too_old || too_big) && remove(entries[i])) gone[i] = true;
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!gone[i]) ++report.entries;
  }
  report.bytes = total;
  return report;
}

}  // namespace fabuild
