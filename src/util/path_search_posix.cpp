#include "util/path_search.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace fabuild {

std::string find_in_path(const std::string& program, const std::string& path_env) {
  const auto usable = [](const std::string& p) {
    struct stat st = {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) return usable(program) ? program : std::string();
  const std::string path = path_env.empty() ? "/bin:/usr/bin" : path_env;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = std::min(path.find(':', start), path.size());
    const std::string dir = path.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (usable(candidate)) return candidate;
    start = end + 1;
  }
  return {};
}

}  // namespace fabuild
