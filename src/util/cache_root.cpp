#include "util/cache_root.h"

#include "util/error.h"
#include "util/host_info.h"

namespace fabuild {

namespace fs = std::filesystem;

fs::path fabuild_cache_root(const Environment& env) {
  const auto value = [&](const char* name) { return env.value(name); };  // "" when unset
  if (const std::string own = value("FABUILD_CACHE_DIR"); !own.empty()) return fs::absolute(own);
  const std::string xdg =
      value(kWindowsHost && !env.has("XDG_CACHE_HOME") ? "LOCALAPPDATA" : "XDG_CACHE_HOME");  // Windows' own place
  if (!xdg.empty() && fs::path(xdg).is_absolute()) return fs::path(xdg) / "fabuild";
  if (const std::string home = value("HOME"); !home.empty()) return fs::path(home) / ".cache" / "fabuild";
  throw UserError(kExitBadConfig, Location{}, "cannot place fabuild's cache: HOME is not set",
                  "set FABUILD_CACHE_DIR to a writable directory");
}

}  // namespace fabuild
