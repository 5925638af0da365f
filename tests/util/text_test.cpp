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
  EXPECT_TRUE(has_glob("fa2.8.3-*"));
  EXPECT_FALSE(has_glob("fa2.8.3"));
}

TEST(Text, SplitAndTrim) {
  EXPECT_EQ(split("80;90;", ';'), (std::vector<std::string>{"80", "90", ""}));
  EXPECT_EQ(trim("  a b \n"), "a b");
}

}  // namespace
}  // namespace fabuild
