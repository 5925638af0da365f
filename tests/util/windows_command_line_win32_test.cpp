#include <windows.h>
// After windows.h:
#include <shellapi.h>

#include <gtest/gtest.h>

#include "util/windows_api.h"
#include "util/windows_command_line.h"

// What the quoting makes, split again by the real CommandLineToArgvW.
namespace fabuild {
namespace {

std::vector<std::string> split_by_windows(const std::string& line) {
  int count = 0;
  wchar_t** wide = CommandLineToArgvW(win32::widen(line).c_str(), &count);
  std::vector<std::string> args;
  for (int i = 0; i < count; ++i) args.push_back(win32::narrow(wide[i]));
  LocalFree(wide);
  return args;
}

TEST(WindowsCommandLineOnWindows, CommandLineToArgvWGivesBackEveryWord) {
  const std::vector<std::string> argv = {"C:\\Program Files\\prog.exe",
                                         "plain",
                                         "",
                                         "two words",
                                         "say \"hi\"",
                                         "trailing\\",
                                         "C:\\my dir\\",
                                         "a\\\\\"b c",
                                         "\\\\server\\share",
                                         "ünïcödé €",
                                         "tab\there",
                                         "\"",
                                         "\\"};
  EXPECT_EQ(split_by_windows(windows_command_line(argv)), argv);
}

}  // namespace
}  // namespace fabuild
