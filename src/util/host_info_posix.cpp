#include <sys/utsname.h>
#include <unistd.h>

#include <string>

#include "util/host_info.h"

namespace fabuild {

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("?");
}

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

std::vector<std::string> utf8_arguments(int argc, char** argv) { return {argv, argv + argc}; }

std::string host_platform_tag() {
  struct utsname name {};
  if (::uname(&name) != 0) return {};
  const std::string m = name.machine;
  return m == "aarch64" || m == "arm64" ? "linux_aarch64" : m == "x86_64" ? "linux_x86_64" : "linux_" + m;
}

std::string invoking_user() { return std::to_string(::getuid()) + ":" + std::to_string(::getgid()); }

bool running_as_root() { return ::geteuid() == 0; }

}  // namespace fabuild
