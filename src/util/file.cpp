#include "util/file.h"

// What file.h builds from its platform calls (file_posix.cpp, file_win32.cpp), the same on both.

namespace fabuild {

namespace fs = std::filesystem;

Expected<void> write_whole_file(const fs::path& path, std::string_view content, const fs::path& temp_dir,
                                bool durable) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  fs::path temp;
  Expected<File> file = create_temp_beside((temp_dir.empty() ? dir : temp_dir) / path.filename(), temp);
  if (!file) return tl::make_unexpected(file.error());
  Expected<void> done = file->write(content);
  if (done && durable) done = file->sync();
  if (done) done = file->close();
  if (done) done = replace_file(temp, path);
  if (!done) {
    *file = File();  // closed before it is removed: Windows removes no open file
    std::error_code ignored;
    fs::remove(temp, ignored);
    return done;
  }
  if (durable) sync_directory(dir);
  return {};
}

std::uint64_t free_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path at = std::filesystem::absolute(path, ec);
  while (!ec && !at.empty() && !std::filesystem::exists(at, ec) && at.has_relative_path()) at = at.parent_path();
  const std::filesystem::space_info space = std::filesystem::space(at, ec);
  return ec ? UINT64_MAX : static_cast<std::uint64_t>(space.available);
}

std::uint64_t bytes_under(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(path, ec))) {
    const auto size = fs::file_size(path, ec);
    return ec ? 0 : size;
  }
  std::uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e;
    if (it->is_regular_file(e) && !it->is_symlink(e)) total += it->file_size(e);
  }
  return total;
}

}  // namespace fabuild
