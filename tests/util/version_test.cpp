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

// The first four release numbers are kept inline, the rest apart: both read the same.
TEST(Version, LongReleasesReadLikeShortOnes) {
  EXPECT_EQ(V("1.2.3.4.5.6").str(), "1.2.3.4.5.6");
  EXPECT_EQ(V("1.2.3.4.5.6").release().size(), 6u);
  EXPECT_EQ(V("1.2.3.4.5.6.post1").str(), "1.2.3.4.5.6.post1");
  EXPECT_EQ(V("1.2.3.4"), V("1.2.3.4.0.0"));
  EXPECT_LT(V("1.2.3.4.5"), V("1.2.3.4.6"));
  EXPECT_TRUE(V("1.2.3.4.5.6").has_prefix(V("1.2.3.4.5")));
  EXPECT_FALSE(V("1.2.3.4.5").has_prefix(V("1.2.3.4.6")));
  const Version copy = V("1.2.3.4.5.6");
  EXPECT_EQ(copy.str(), "1.2.3.4.5.6");
  EXPECT_EQ(Version{}.str(), "");
}

// A plan of 100 000 cells holds several versions a cell (docs/performance.md, planning).
TEST(Version, TakesThirtyTwoBytes) { EXPECT_LE(sizeof(Version), 32u); }

TEST(Version, CopiesAndMovesKeepTheValue) {
  for (const char* text : {"2.8.3", "1.2.3.4.5.6", "2.9.0rc1.post2.dev3"}) {
    Version a = V(text);
    Version b = a;
    EXPECT_EQ(b.str(), text);
    b = V("1.2.3.4.5.6.7");
    b = a;
    EXPECT_EQ(b.str(), text);
    Version c = std::move(a);
    EXPECT_EQ(c.str(), text);
    a = std::move(c);
    EXPECT_EQ(a.str(), text);
    c = a;  // a moved-from version can be given a new value
    EXPECT_EQ(c, a);
  }
}

TEST(Version, SeriesVersionIsTheParsedSeries) {
  for (const char* text : {"2.8.3", "2.8", "2", "2.9.0rc1", "12.8.1.post2", "1.2.3.4.5.6"}) {
    const Version v = V(text);
    EXPECT_EQ(v.series_version().str(), V(v.series().c_str()).str()) << text;
    EXPECT_EQ(v.series_version(), V(v.series().c_str())) << text;
  }
}

TEST(Version, Prefix) {
  EXPECT_TRUE(V("2.8.3").has_prefix(V("2.8")));
  EXPECT_FALSE(V("2.8.3").has_prefix(V("2.7")));
  EXPECT_FALSE(V("2.8").has_prefix(V("2.8.3")));
}

// torch's nightlies, as FlashAttention 3's setup.py names the first with its stable API.
TEST(Version, ANightlysDateIsItsDevNumber) {
  const auto nightly = Version::parse("2.9.0.dev20250830");
  ASSERT_TRUE(nightly.has_value());
  EXPECT_EQ(nightly->str(), "2.9.0.dev20250830");
  EXPECT_LT(*nightly, *Version::parse("2.9.0"));
  EXPECT_LT(*Version::parse("2.9.0.dev20250829"), *nightly);
  EXPECT_FALSE(Version::parse("2.9.0.dev1234567890").has_value());  // more than fits
}

}  // namespace
}  // namespace fabuild
