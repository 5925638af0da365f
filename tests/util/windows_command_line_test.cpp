#include "util/windows_command_line.h"

#include <gtest/gtest.h>

// The quoting rules of CommandLineToArgvW and the C runtime, checked as text here on every
// platform, and against the real CommandLineToArgvW in windows_command_line_win32_test.cpp.
namespace fabuild {
namespace {

TEST(WindowsCommandLine, PlainWordsStayAsTheyAre) {
  EXPECT_EQ(windows_command_line({"prog.exe", "a", "b-c", "d=e"}), "prog.exe a b-c d=e");
}

TEST(WindowsCommandLine, SpacesTabsQuotesAndEmptyWordsAreQuoted) {
  EXPECT_EQ(quote_windows_argument("two words"), "\"two words\"");
  EXPECT_EQ(quote_windows_argument(""), "\"\"");
  EXPECT_EQ(quote_windows_argument("a\tb"), "\"a\tb\"");
  EXPECT_EQ(quote_windows_argument("say \"hi\""), "\"say \\\"hi\\\"\"");
}

TEST(WindowsCommandLine, BackslashesDoubleOnlyBeforeAQuote) {
  EXPECT_EQ(quote_windows_argument("C:\\dir\\file"), "C:\\dir\\file");  // nothing to quote
  EXPECT_EQ(quote_windows_argument("C:\\my dir\\"), "\"C:\\my dir\\\\\"");
  EXPECT_EQ(quote_windows_argument("a\\\\\"b c"), "\"a\\\\\\\\\\\"b c\"");
}

TEST(WindowsCommandLine, TheProgramNameIsQuotedWithoutEscapes) {
  EXPECT_EQ(windows_command_line({"C:\\Program Files\\x.exe", "y"}), "\"C:\\Program Files\\x.exe\" y");
}

TEST(WindowsCommandLine, CmdGetsItsCommandVerbatimInOnePairOfQuotes) {
  EXPECT_EQ(windows_command_line(
                {"C:\\Windows\\System32\\cmd.exe", "/d", "/s", "/c", "\"C:\\VS\\vcvarsall.bat\" x64 && set"}),
            "C:\\Windows\\System32\\cmd.exe /d /s /c \"\"C:\\VS\\vcvarsall.bat\" x64 && set\"");
  EXPECT_EQ(windows_command_line({"CMD", "/C", "echo", "a b"}), "CMD /C \"echo a b\"");
}

}  // namespace
}  // namespace fabuild
