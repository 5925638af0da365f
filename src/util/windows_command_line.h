#pragma once

// A Windows process gets one command-line string, not an argv: each program splits it itself,
// almost always by the rules of CommandLineToArgvW and the C runtime. This makes the string
// that those rules split back into exactly `argv` (portable code, so its tests run on every
// platform; process_win32.cpp passes it to CreateProcessW).
//
// cmd.exe is the exception that needs saying: it does not split its command, it runs what
// follows /c as written. So for argv[0] cmd or cmd.exe, the words after "/c" (or "/k") are
// joined with spaces as they are and wrapped in one pair of quotes, which `cmd /s /c` strips:
// {"cmd.exe", "/d", "/s", "/c", "\"C:\\VS\\vcvarsall.bat\" x64 && set"} runs that line.

#include <string>
#include <vector>

namespace fabuild {

std::string windows_command_line(const std::vector<std::string>& argv);

// One argument quoted for CommandLineToArgvW: as it is when it has no space, tab or quote and
// is not empty; else in quotes, with backslashes doubled before a quote and at the end.
std::string quote_windows_argument(const std::string& arg);

}  // namespace fabuild
