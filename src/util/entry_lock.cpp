#include "util/entry_lock.h"

#include <chrono>
#include <thread>

namespace fabuild {

namespace fs = std::filesystem;

namespace {

fs::path beside(const fs::path& entry, const char* suffix) {
  return entry.parent_path() / ("." + entry.filename().string() + suffix);
}

std::optional<File> open_lock(const fs::path& file) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  Expected<File> opened = File::open(file, File::Mode::kReadWrite);
  if (!opened) return std::nullopt;
  return std::move(*opened);
}

// A lock that is not ours, or a file that cannot be locked: either way, not taken.
bool taken(const Expected<bool>& locked) { return locked && *locked; }

}  // namespace

fs::path entry_make_lock(const fs::path& entry) { return beside(entry, ".make"); }
fs::path entry_use_lock(const fs::path& entry) { return beside(entry, ".use"); }

std::optional<EntryUse> EntryUse::take(const fs::path& entry) {
  std::optional<File> file = open_lock(entry_use_lock(entry));
  if (!file) return std::nullopt;
  for (;;) {
    const Expected<bool> locked = file->try_lock_shared();
    if (!locked) return std::nullopt;
    if (*locked) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return EntryUse(std::move(*file));
}

std::optional<EntryRemoval> EntryRemoval::try_take(const fs::path& entry) {
  std::optional<File> make = open_lock(entry_make_lock(entry));
  std::optional<File> use = open_lock(entry_use_lock(entry));
  if (!make || !use || !taken(make->try_lock()) || !taken(use->try_lock())) return std::nullopt;
  return EntryRemoval(std::move(*make), std::move(*use));
}

}  // namespace fabuild
