#include <filesystem>

#include "util/path_search.h"
#include "util/text.h"

namespace fabuild {

// Windows' form of the search: ';'-separated, names tried with each PATHEXT extension first
// (the caller's PATHEXT is not at hand here: the usual list), then as written.
std::string find_in_path(const std::string& program, const std::string& path_env) {
  namespace fs = std::filesystem;
  const auto usable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
  };
  if (program.find_first_of("/\\:") != std::string::npos) return usable(program) ? program : std::string();
  for (const std::string& dir : split(path_env, ';')) {
    if (dir.empty()) continue;
    for (const char* ext : {".com", ".exe", ".bat", ".cmd", ""}) {
      const fs::path candidate = fs::path(dir) / (program + ext);
      if ((*ext != '\0' || fs::path(program).has_extension()) && usable(candidate)) return candidate.string();
    }
  }
  return {};
}

}  // namespace fabuild
