#include "engine/staging.h"

#include <algorithm>
#include <filesystem>

#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;

Expected<void> prepare_staging(Files& files, const std::string& dir) {
  (void)files.remove_all(dir);  // what cannot be removed, the next step says
  return files.create_directories(dir);
}

Expected<std::vector<std::string>> file_outputs(Files& files, const std::string& staging,
                                                const std::string& output_dir) {
  std::vector<std::string> filed;
  if (files.kind(staging) != Files::Kind::kDirectory) return filed;
  auto entries = files.list(staging);
  if (!entries) return tl::make_unexpected(entries.error());
  for (const fs::path& entry : *entries) {
    if (files.kind(entry) != Files::Kind::kFile || files.is_link(entry)) continue;
    const std::string name = entry.filename().string();
    if (name.starts_with(".")) continue;  // fabuild's own notes, not outputs
    if (auto made = files.create_directories(output_dir); !made) return tl::make_unexpected(made.error());
    if (auto moved = files.rename(entry, fs::path(output_dir) / name); !moved)
      return tl::make_unexpected(moved.error());
    filed.push_back(name);
  }
  std::sort(filed.begin(), filed.end());
  return filed;
}

void discard_staging(Files& files, const std::string& dir) { (void)files.remove_all(dir); }

std::vector<std::string> log_tail(const Files& files, const std::string& path, std::size_t n) {
  constexpr std::uint64_t kMaxBytes = 64 * 1024;
  const auto identity = files.identity(path);
  const std::uint64_t size = identity && identity->size > 0 ? static_cast<std::uint64_t>(identity->size) : 0;
  const bool cut = size > kMaxBytes;
  std::vector<std::string> lines = split(files.read_from(path, cut ? size - kMaxBytes : 0).value_or(""), '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (cut && !lines.empty()) lines.erase(lines.begin());  // the first may be cut
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return lines;
}

}  // namespace fabuild
