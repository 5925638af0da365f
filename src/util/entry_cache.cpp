#include "util/entry_cache.h"

#include <algorithm>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/entry_lock.h"
#include "util/file.h"
#include "util/read_whole.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

struct Entry {
  fs::path path;
  fs::file_time_type used;
  std::uint64_t bytes = 0;
};

// What each entry held when it was last used, measured then: `.sizes` in the cache directory,
// {"<entry>": {"bytes": N, "used": <its last-write time>}}. An entry whose time is unchanged
// since is not walked again: a run that made or used no entry reads no environment's tens of
// thousands of files (300 ms of stat calls for five torch environments), one that used an
// entry (mark_used) walks that one. A hint only: a memo that cannot be read or written costs
// the walk, and two runs writing it keep the one that wrote last.
constexpr const char* kSizesFile = ".sizes";

struct Measured {
  std::int64_t used = 0;
  std::uint64_t bytes = 0;
  friend bool operator==(const Measured&, const Measured&) = default;
};

std::map<std::string, Measured> read_sizes(const fs::path& dir) {
  std::map<std::string, Measured> sizes;
  const auto text = read_whole(dir / kSizesFile);
  if (!text) return sizes;
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object()) return sizes;
  for (const auto& [name, m] : j.items()) {
    if (!m.is_object() || !m.contains("used") || !m.contains("bytes") || !m["used"].is_number_integer() ||
        !m["bytes"].is_number_unsigned()) {
      continue;
    }
    sizes[name] = {m["used"].get<std::int64_t>(), m["bytes"].get<std::uint64_t>()};
  }
  return sizes;
}

void write_sizes(const fs::path& dir, const std::map<std::string, Measured>& sizes) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, m] : sizes) j[name] = {{"used", m.used}, {"bytes", m.bytes}};
  (void)write_whole_file(dir / kSizesFile, j.dump());
}

}  // namespace

void mark_used(const fs::path& entry) { set_last_write_time(entry, fs::file_time_type::clock::now()); }

EntryCacheReport trim_entry_cache(const fs::path& dir, const EntryCacheLimits& limits, fs::file_time_type now) {
  EntryCacheReport report;
  std::vector<Entry> entries;
  const std::map<std::string, Measured> known = read_sizes(dir);
  std::map<std::string, Measured> sizes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.front() == '.') continue;
    std::error_code te;
    const auto used = fs::last_write_time(e.path(), te);
    if (te) continue;
    const std::int64_t ticks = used.time_since_epoch().count();
    const auto memo = known.find(name);
    const std::uint64_t bytes =
        memo != known.end() && memo->second.used == ticks ? memo->second.bytes : bytes_under(e.path());
    sizes[name] = {ticks, bytes};
    entries.push_back({e.path(), used, bytes});
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
    if (!gone[i]) {
      ++report.entries;
    } else {
      sizes.erase(entries[i].path.filename().string());
    }
  }
  report.bytes = total;
  if (sizes != known) write_sizes(dir, sizes);
  return report;
}

}  // namespace fabuild
