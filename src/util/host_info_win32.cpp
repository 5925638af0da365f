#include <io.h>

#include <cstdio>

#include "util/host_info.h"
#include "util/windows_api.h"
// After windows.h:
#include <shellapi.h>

namespace fabuild {

std::string host_name() {
  wchar_t name[MAX_COMPUTERNAME_LENGTH + 1] = {};
  DWORD size = MAX_COMPUTERNAME_LENGTH + 1;
  return GetComputerNameW(name, &size) ? win32::narrow(std::wstring_view(name, size)) : std::string("?");
}

bool stdout_is_terminal() { return _isatty(_fileno(stdout)) != 0; }

std::vector<std::string> utf8_arguments(int argc, char** argv) {
  SetConsoleOutputCP(CP_UTF8);
  int count = 0;
  wchar_t** wide = CommandLineToArgvW(GetCommandLineW(), &count);
  if (wide == nullptr) return {argv, argv + argc};
  std::vector<std::string> args;
  for (int i = 0; i < count; ++i) args.push_back(win32::narrow(wide[i]));
  LocalFree(wide);
  return args;
}

std::string host_platform_tag() {
  SYSTEM_INFO info = {};
  GetNativeSystemInfo(&info);
  return info.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "win_arm64" : "win_amd64";
}

std::string invoking_user() { return {}; }

bool running_as_root() { return false; }

}  // namespace fabuild
