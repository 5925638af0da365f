#include "cli/system.h"

#include "publish/run_record.h"
#include "source/cache.h"
#include "util/host_info.h"

namespace fabuild {

namespace {

const char* or_null(const Environment& env, const char* name, std::string& keep) {
  const auto value = env.get(name);
  if (!value) return nullptr;
  keep = *value;
  return keep.c_str();
}

}  // namespace

System real_system() {
  System s;
  s.env = Environment::of_this_process();
  s.make_supervisor = [] { return make_process_supervisor(); };
  s.commands = std::make_shared<ProcessCommandRunner>();
  s.stdout_is_terminal = stdout_is_terminal();
  s.cache_dir = [env = s.env] {
    std::string own, xdg, home;
    // Windows keeps a user's caches in %LOCALAPPDATA%, where XDG_CACHE_HOME points elsewhere.
    const char* cache_home = kWindowsHost && !env.has("XDG_CACHE_HOME") ? "LOCALAPPDATA" : "XDG_CACHE_HOME";
    return cache_dir_from(or_null(env, "FABUILD_CACHE_DIR", own), or_null(env, cache_home, xdg),
                          or_null(env, "HOME", home));
  };
  s.self = self_executable();
  s.machine = [] { return detect_resources(); };
  s.platform = host_platform_tag();
  s.utc_now = utc_now_iso8601;
  s.open_remote = [](const std::string& url, const std::string& token) -> Expected<std::shared_ptr<remote::Store>> {
    auto store = remote::open_store(url, token);
    if (!store) return tl::make_unexpected(store.error());
    return std::shared_ptr<remote::Store>(std::move(*store));
  };
  return s;
}

}  // namespace fabuild
