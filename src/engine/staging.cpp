#include "engine/staging.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "util/read_whole.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;

void prepare_staging(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
}

std::vector<std::string> file_outputs(const std::string& staging, const std::string& output_dir) {
  std::vector<std::string> filed;
  std::error_code ec;
  if (!fs::is_directory(staging, ec)) return filed;
  for (const auto& entry : fs::directory_iterator(staging)) {
    if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
    if (entry.path().filename().string().starts_with(".")) continue;  // fabuild's own notes, not outputs
    fs::create_directories(output_dir);
    fs::rename(entry.path(), fs::path(output_dir) / entry.path().filename());
    filed.push_back(entry.path().filename().string());
  }
  std::sort(filed.begin(), filed.end());
  return filed;
}

void discard_staging(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

std::vector<std::string> log_tail(const std::string& path, std::size_t n) {
  constexpr std::uintmax_t kMaxBytes = 64 * 1024;
  std::error_code ec;
  const bool cut = fs::file_size(path, ec) > kMaxBytes && !ec;
  std::vector<std::string> lines = split(read_tail(path, 0, kMaxBytes), '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (cut && !lines.empty()) lines.erase(lines.begin());  // the first may be cut
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return lines;
}

}  // namespace fabuild
