#include "util/cache_root.h"

#include <gtest/gtest.h>

#include "util/error.h"
#include "util/host_info.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

TEST(CacheRoot, FabuildCacheDirWinsOverXdgAndHome) {
  EXPECT_EQ(fabuild_cache_root({{"FABUILD_CACHE_DIR", "/srv/cache"}, {"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}}),
            fs::path("/srv/cache"));
}

TEST(CacheRoot, XdgCacheHomeWinsOverHome) {
  EXPECT_EQ(fabuild_cache_root({{"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}}), fs::path("/xdg/fabuild"));
  EXPECT_EQ(fabuild_cache_root({{"FABUILD_CACHE_DIR", ""}, {"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}}),
            fs::path("/xdg/fabuild"))
      << "empty counts as unset";
}

TEST(CacheRoot, HomeIsTheFallback) {
  if (kWindowsHost) GTEST_SKIP() << "Windows' fallback is %LOCALAPPDATA%";
  EXPECT_EQ(fabuild_cache_root({{"HOME", "/home/u"}}), fs::path("/home/u/.cache/fabuild"));
  EXPECT_EQ(fabuild_cache_root({{"XDG_CACHE_HOME", "relative/xdg"}, {"HOME", "/home/u"}}),
            fs::path("/home/u/.cache/fabuild"))
      << "the XDG spec says to ignore a relative XDG_CACHE_HOME";
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
