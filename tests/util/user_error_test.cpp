// A UserError quotes what users and attackers wrote; its text is safe to print to a terminal.

#include <gtest/gtest.h>

#include "util/error.h"

namespace fabuild {
namespace {

TEST(UserError, ControlCharactersAreShownEscapedNeverRaw) {
  const UserError e(kExitBadConfig, Location{"m\x1b.yaml", 3, 7},
                    "platform 'linux\x1b]0;owned\x07\nfabuild: all 12 cells ok\t\x7f' is unknown",
                    "hint with \r carriage return and \xc2\x9b C1 CSI");
  EXPECT_EQ(e.message(), "platform 'linux\\x1b]0;owned\\x07\\nfabuild: all 12 cells ok\\t\\x7f' is unknown");
  EXPECT_EQ(e.hint(), "hint with \\x0d carriage return and \\u009b C1 CSI");
  EXPECT_EQ(e.where().file, "m\\x1b.yaml");
  EXPECT_EQ(std::string(e.what()), "m\\x1b.yaml:3:7: " + e.message());
}

TEST(UserError, AMessageMayGoOnOverIndentedLinesButNeverStartALine) {
  const UserError e(kExitCellFailed, Location{}, "2 conflicts\n  a.whl\n    sha256 1\nfabuild: forged\n", "");
  EXPECT_EQ(e.message(), "2 conflicts\n  a.whl\n    sha256 1\\nfabuild: forged\\n");
}

TEST(UserError, OrdinaryTextAndUtf8AreKept) {
  const UserError e(kExitCellFailed, Location{"wheelhouse/fa2.8.3"}, "café — 'ü' — 🚀", "");
  EXPECT_EQ(e.message(), "café — 'ü' — 🚀");
  EXPECT_EQ(std::string(e.what()), "wheelhouse/fa2.8.3: café — 'ü' — 🚀");
}

}  // namespace
}  // namespace fabuild
