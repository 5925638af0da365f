#include "util/file.h"

// What file.h builds from its platform calls (file_posix.cpp, file_win32.cpp), the same on both.

namespace fabuild {

namespace fs = std::filesystem;

void write_whole_file(const fs::path& path, std::string_view content, const fs::path& temp_dir, bool durable) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  fs::path temp;
  File file = create_temp_beside((temp_dir.empty() ? dir : temp_dir) / path.filename(), temp);
  try {
    file.write(content);
    if (durable) file.sync();
    file.close();
    replace_file(temp, path);
  } catch (const std::runtime_error&) {
    file = File();  // closed before it is removed: Windows removes no open file
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
  if (durable) sync_directory(dir);
}

}  // namespace fabuild
