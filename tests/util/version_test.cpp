#include "util/version.h"

#include <gtest/gtest.h>

namespace fabuild {
namespace {

Version V(const char* s) {
  auto v = Version::parse(s);
  EXPECT_TRUE(v.has_value()) << s;
  return v.value_or(Version{});
}

TEST(Version, ParsesWhatPackagesUse) {
  EXPECT_EQ(V("2.8.3").str(), "2.8.3");
  EXPECT_EQ(V("2.8.0.post2").str(), "2.8.0.post2");
  EXPECT_EQ(V("2.9.0rc1").str(), "2.9.0rc1");
  EXPECT_EQ(V("2.10").str(), "2.10");
  EXPECT_EQ(V("v2.8.3").str(), "2.8.3");
  EXPECT_EQ(V("2.8.3").series(), "2.8");
}

TEST(Version, RejectsWhatIsNotAVersion) {
  for (const char* bad : {"", "2.x", "two", "2..8", "2.8.", ".2", "2.8.3+cu128", "2.8 3", "1234567.1"}) {
    EXPECT_FALSE(Version::parse(bad).has_value()) << bad;
  }
}

TEST(Version, OrdersAsPep440) {
  EXPECT_LT(V("2.9"), V("2.10"));
  EXPECT_EQ(V("2.8"), V("2.8.0"));
  EXPECT_LT(V("2.9.0rc1"), V("2.9.0"));
  EXPECT_LT(V("2.9.0.dev1"), V("2.9.0a1"));
  EXPECT_LT(V("2.8.0"), V("2.8.0.post2"));
  EXPECT_LT(V("2.8.0.post2"), V("2.8.1"));
}

TEST(Version, Prefix) {
  EXPECT_TRUE(V("2.8.3").has_prefix(V("2.8")));
  EXPECT_FALSE(V("2.8.3").has_prefix(V("2.7")));
  EXPECT_FALSE(V("2.8").has_prefix(V("2.8.3")));
}

}  // namespace
}  // namespace fabuild
