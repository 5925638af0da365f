#include "util/cache_root.h"

#include <vector>

#include <fmt/format.h>

#include "util/error.h"
#include "util/host_info.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;

fs::path fabuild_cache_root(const Environment& env) {
  const auto value = [&](const char* name) { return env.value(name); };  // "" when unset
  if (const std::string own = value("FABUILD_CACHE_DIR"); !own.empty()) return fs::absolute(own);
  std::vector<std::string> unusable;  // set, but no absolute path of this system
  // XDG_CACHE_HOME first where it is set; on Windows then LOCALAPPDATA, Windows' own place. An
  // MSYS2 shell or Wine caller passes a POSIX XDG_CACHE_HOME ("/tmp/x") on to fabuild.exe, where
  // it is no absolute path: LOCALAPPDATA is taken instead.
  std::vector<const char*> names = {"XDG_CACHE_HOME"};
  if (kWindowsHost) names.push_back("LOCALAPPDATA");
  for (const char* name : names) {
    const std::string dir = value(name);
    if (dir.empty()) continue;
    if (fs::path(dir).is_absolute()) return fs::path(dir) / "fabuild";
    unusable.push_back(fmt::format("{}={} is no absolute path here", name, dir));
  }
  if (const std::string home = value("HOME"); !home.empty()) return fs::path(home) / ".cache" / "fabuild";
  throw UserError(kExitBadConfig, Location{},
                  unusable.empty() ? std::string("cannot place fabuild's cache: HOME is not set")
                                   : "cannot place fabuild's cache: " + join(unusable, "; ") + ", and HOME is not set",
                  "set FABUILD_CACHE_DIR to a writable directory");
}

}  // namespace fabuild
