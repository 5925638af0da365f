#pragma once

// What fabuild asks about the machine it runs on and its user (host_info_posix.cpp,
// host_info_win32.cpp).

#include <string>
#include <vector>

namespace fabuild {

#ifdef _WIN32
inline constexpr bool kWindowsHost = true;
#else
inline constexpr bool kWindowsHost = false;
#endif

// The machine's name, "?" when it cannot be told.
std::string host_name();

bool stdout_is_terminal();

// The program's arguments in UTF-8: argv as it is on POSIX; on Windows, where argv is in the
// ANSI code page, GetCommandLineW's split by CommandLineToArgvW. Also sets a Windows console's
// output to UTF-8, which is what fabuild prints.
std::vector<std::string> utf8_arguments(int argc, char** argv);

// The wheel platform tag of this machine's builds: "linux_x86_64", "linux_aarch64", "win_amd64".
std::string host_platform_tag();

// The user and group a container's processes should run as, "uid:gid", so that what they write is
// the invoker's; and whether that is root. Windows runs no cell in a container.
std::string invoking_user();
bool running_as_root();

}  // namespace fabuild
