#include "util/entry_lock.h"

#include <chrono>
#include <stdexcept>
#include <thread>

namespace fabuild {

namespace fs = std::filesystem;

namespace {

fs::path beside(const fs::path& entry, const char* suffix) {
  return entry.parent_path() / ("." + entry.filename().string() + suffix);
}

std::optional<File> open_lock(const fs::path& file) {
  try {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    return File(file, File::Mode::kReadWrite);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

}  // namespace

fs::path entry_make_lock(const fs::path& entry) { return beside(entry, ".make"); }
fs::path entry_use_lock(const fs::path& entry) { return beside(entry, ".use"); }

std::optional<EntryUse> EntryUse::take(const fs::path& entry) {
  std::optional<File> file = open_lock(entry_use_lock(entry));
  if (!file) return std::nullopt;
  try {
    while (!file->try_lock_shared()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
  return EntryUse(std::move(*file));
}

std::optional<EntryRemoval> EntryRemoval::try_take(const fs::path& entry) {
  std::optional<File> make = open_lock(entry_make_lock(entry));
  std::optional<File> use = open_lock(entry_use_lock(entry));
  try {
    if (!make || !use || !make->try_lock() || !use->try_lock()) return std::nullopt;
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
  return EntryRemoval(std::move(*make), std::move(*use));
}

}  // namespace fabuild
