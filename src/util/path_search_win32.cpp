#include <filesystem>

#include <fmt/format.h>

#include "util/path_search.h"
#include "util/text.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

Expected<std::string> search_path(const std::string& name, const std::string& path_env, const std::string& cwd,
                                  const std::string& pathext) {
  const std::string extensions = pathext.empty() ? ".COM;.EXE;.BAT;.CMD" : pathext;
  const bool has_extension = fs::path(name).has_extension();
  for (const std::string& dir : split(path_env, ';')) {
    if (dir.empty()) continue;
    const fs::path base = fs::path(dir);
    const fs::path where = base.is_relative() && !cwd.empty() ? fs::path(cwd) / base : base;
    for (const std::string& ext : split(extensions, ';')) {
      if (!ext.empty() && is_file(where / fs::path(name + ext))) return (base / fs::path(name + ext)).string();
    }
    if (has_extension && is_file(where / fs::path(name))) return (base / fs::path(name)).string();
  }
  return fail(fmt::format("{}: not found (searched PATH={})", name, path_env));
}

std::string find_in_path(const std::string& program, const std::string& path_env) {
  if (program.find_first_of("/\\:") != std::string::npos) return is_file(program) ? program : std::string();
  return search_path(program, path_env).value_or("");
}

}  // namespace fabuild
