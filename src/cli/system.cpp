#include "cli/system.h"

#include <sys/utsname.h>
#include <unistd.h>

#include "publish/run_record.h"
#include "source/cache.h"

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
  s.make_supervisor = [] { return make_posix_supervisor(); };
  s.commands = std::make_shared<ProcessCommandRunner>();
  s.stdout_is_terminal = ::isatty(STDOUT_FILENO) == 1;
  s.cache_dir = [env = s.env] {
    std::string own, xdg, home;
    return cache_dir_from(or_null(env, "FABUILD_CACHE_DIR", own), or_null(env, "XDG_CACHE_HOME", xdg),
                          or_null(env, "HOME", home));
  };
  s.self = self_executable();
  s.machine = [] { return detect_resources(); };
  struct utsname name {};
  if (::uname(&name) == 0) {
    const std::string m = name.machine;
    s.platform = m == "aarch64" || m == "arm64" ? "linux_aarch64" : m == "x86_64" ? "linux_x86_64" : "linux_" + m;
  }
  s.utc_now = utc_now_iso8601;
  s.open_remote = [](const std::string& url, const std::string& token) -> std::shared_ptr<remote::Store> {
    return remote::http_store(url, token);
  };
  return s;
}

}  // namespace fabuild
