#include "util/text.h"

#include <gtest/gtest.h>

namespace fabuild {
namespace {

TEST(Text, DidYouMeanFindsTypos) {
  const std::vector<std::string> keys = {"versions", "torch", "cuda", "python", "exclude", "include"};
  EXPECT_EQ(did_you_mean("pyhton", keys), " (did you mean 'python'?)");
  EXPECT_EQ(did_you_mean("version", keys), " (did you mean 'versions'?)");
  EXPECT_EQ(did_you_mean("excludes", keys), " (did you mean 'exclude'?)");
  EXPECT_EQ(did_you_mean("compiler", keys), "");
  EXPECT_EQ(edit_distance("pyhton", "python"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Text, GlobMatchesWholeStrings) {
  EXPECT_TRUE(glob_match("cp31*", "cp312"));
  EXPECT_FALSE(glob_match("cp31*", "cp39"));
  EXPECT_TRUE(glob_match("cp31[23]", "cp313"));
  EXPECT_FALSE(glob_match("cp3", "cp312"));
}

// fnmatch(3)'s answers (flags 0), which the Windows build gives without it (glob_win32.cpp).
TEST(Text, GlobFollowsFnmatch) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "fa2.8.3/torch2.8"));  // '*' crosses '/' without FNM_PATHNAME
  EXPECT_TRUE(glob_match("a*b*c", "axxbyyc"));
  EXPECT_FALSE(glob_match("a*b*c", "axxbyy"));
  EXPECT_TRUE(glob_match("*.whl", "flash_attn-2.8.3-cp312-cp312-win_amd64.whl"));
  EXPECT_TRUE(glob_match("cp31?", "cp312"));
  EXPECT_FALSE(glob_match("cp31?", "cp31"));
  EXPECT_TRUE(glob_match("cu12[6-9]", "cu128"));
  EXPECT_FALSE(glob_match("cu12[!6-9]", "cu128"));
  EXPECT_TRUE(glob_match("cu12[!6-9]", "cu124"));
  EXPECT_TRUE(glob_match("x[]]y", "x]y"));
  EXPECT_TRUE(glob_match("a[b", "a[b"));  // no ']': an ordinary '['
  EXPECT_TRUE(glob_match("a\\*b", "a*b"));
  EXPECT_FALSE(glob_match("a\\*b", "axb"));
  EXPECT_TRUE(glob_match("2.*.*", "2.8.3"));
  EXPECT_TRUE(has_glob("fa2.8.3-*"));
  EXPECT_FALSE(has_glob("fa2.8.3"));
}

TEST(Text, SplitAndTrim) {
  EXPECT_EQ(split("80;90;", ';'), (std::vector<std::string>{"80", "90", ""}));
  EXPECT_EQ(trim("  a b \n"), "a b");
}

TEST(ParseNumber, TheWholeTextButItsWhiteSpaceIsANumber) {
  EXPECT_EQ(parse_number("2.5"), 2.5);
  EXPECT_EQ(parse_number("4096\n"), 4096.0) << "a cgroup file's line";
  EXPECT_EQ(parse_number(" 200000 "), 200000.0);
  EXPECT_EQ(parse_number("-1"), -1.0);
  EXPECT_FALSE(parse_number("12abc"));
  EXPECT_FALSE(parse_number(""));
  EXPECT_FALSE(parse_number("max"));
  EXPECT_FALSE(parse_number("1 2"));
}

}  // namespace
}  // namespace fabuild
