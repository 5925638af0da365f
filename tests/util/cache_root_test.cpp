#include "util/cache_root.h"

#include <gtest/gtest.h>

#include "util/error.h"
#include "util/host_info.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

// Absolute on this platform ("/tmp/..." or "C:\\...\\Temp\\..."), as the variables hold them.
std::string absolute(const char* name) { return (fs::temp_directory_path() / name).string(); }

TEST(CacheRoot, FabuildCacheDirWinsOverXdgAndHome) {
  EXPECT_EQ(
      fabuild_cache_root(
          {{"FABUILD_CACHE_DIR", absolute("srv")}, {"XDG_CACHE_HOME", absolute("xdg")}, {"HOME", absolute("home")}}),
      fs::path(absolute("srv")));
}

TEST(CacheRoot, XdgCacheHomeWinsOverHome) {
  EXPECT_EQ(fabuild_cache_root({{"XDG_CACHE_HOME", absolute("xdg")}, {"HOME", absolute("home")}}),
            fs::path(absolute("xdg")) / "fabuild");
  EXPECT_EQ(
      fabuild_cache_root({{"FABUILD_CACHE_DIR", ""}, {"XDG_CACHE_HOME", absolute("xdg")}, {"HOME", absolute("home")}}),
      fs::path(absolute("xdg")) / "fabuild")
      << "empty counts as unset";
}

TEST(CacheRoot, HomeIsTheFallback) {
  if (kWindowsHost) GTEST_SKIP() << "Windows' fallback is %LOCALAPPDATA%";
  EXPECT_EQ(fabuild_cache_root({{"HOME", "/home/u"}}), fs::path("/home/u/.cache/fabuild"));
  EXPECT_EQ(fabuild_cache_root({{"XDG_CACHE_HOME", "relative/xdg"}, {"HOME", "/home/u"}}),
            fs::path("/home/u/.cache/fabuild"))
      << "the XDG spec says to ignore a relative XDG_CACHE_HOME";
}

// An MSYS2 shell or Wine caller hands fabuild.exe a POSIX XDG_CACHE_HOME: on Windows it is no
// absolute path, and LOCALAPPDATA is taken; with neither usable, the error names the variable.
TEST(CacheRoot, AnXdgCacheHomeThatIsNoPathHereGivesWayToLocalAppData) {
  if (!kWindowsHost) GTEST_SKIP() << "LOCALAPPDATA is Windows'";
  EXPECT_EQ(fabuild_cache_root({{"XDG_CACHE_HOME", "/tmp/x"}, {"LOCALAPPDATA", absolute("local")}}),
            fs::path(absolute("local")) / "fabuild");
  try {
    fabuild_cache_root({{"XDG_CACHE_HOME", "/tmp/x"}});
    ADD_FAILURE() << "a cache directory was made up";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("XDG_CACHE_HOME=/tmp/x is no absolute path here"), std::string::npos)
        << e.what();
  }
}

TEST(CacheRoot, NothingSetIsAnErrorWithAHint) {
  try {
    fabuild_cache_root(Environment{});
    ADD_FAILURE() << "a cache directory was made up";
  } catch (const UserError& e) {
    EXPECT_NE(e.hint().find("FABUILD_CACHE_DIR"), std::string::npos) << e.hint();
  }
}

}  // namespace
}  // namespace fabuild
