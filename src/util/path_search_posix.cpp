#include "util/path_search.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace fabuild {

// Linked into fabuild-cc too (a static program with util's smallest part): no text.h, no fmt.
Expected<std::string> search_path(const std::string& name, const std::string& path_env, const std::string& cwd,
                                  const std::string&) {
  int best = ENOENT;
  for (std::size_t start = 0; start <= path_env.size();) {
    const std::size_t end = std::min(path_env.find(':', start), path_env.size());
    const std::string dir = path_env.substr(start, end - start);
    start = end + 1;
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    const bool relative = candidate[0] != '/' && !cwd.empty();
    const std::string probe = relative ? cwd + "/" + candidate : candidate;
    struct stat info = {};
    if (::stat(probe.c_str(), &info) != 0) continue;
    if (S_ISREG(info.st_mode) && ::access(probe.c_str(), X_OK) == 0) return candidate;
    best = EACCES;  // like execvp: report a found-but-unusable file over "not found"
  }
  return fail(name + ": " + std::generic_category().message(best) + " (searched PATH=" + path_env + ")");
}

std::string find_in_path(const std::string& program, const std::string& path_env) {
  if (program.find('/') != std::string::npos) {
    struct stat st = {};
    const bool usable =
        ::stat(program.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(program.c_str(), X_OK) == 0;
    return usable ? program : std::string();
  }
  return search_path(program, path_env.empty() ? "/bin:/usr/bin" : path_env).value_or("");
}

}  // namespace fabuild
