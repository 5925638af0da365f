#include "publish/html.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace fabuild {
namespace {

TEST(Html, EscapesWhatWouldEndATextOrAnAttribute) {
  EXPECT_EQ(html_escape(">=3.9,<4 & \"x\" 'y'"), "&gt;=3.9,&lt;4 &amp; &quot;x&quot; &#39;y&#39;");
  EXPECT_EQ(html_escape("flash-attn"), "flash-attn");
}

TEST(Html, UrlPathEncodesPlusAndKeepsSlashes) {
  EXPECT_EQ(url_path("fa2.8.3/torch2.8/cu128/flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl"),
            "fa2.8.3/torch2.8/cu128/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(url_path("a b#c?d%"), "a%20b%23c%3Fd%25");
  EXPECT_EQ(url_path("\xc3\xa9"), "%C3%A9");
}

TEST(Html, NaturalOrderComparesNumbersAsNumbers) {
  std::vector<std::string> v = {"torch2.10", "cp313", "torch2.9", "cp39", "cp310", "torch2.8"};
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return natural_less(a, b); });
  EXPECT_EQ(v, (std::vector<std::string>{"cp39", "cp310", "cp313", "torch2.8", "torch2.9", "torch2.10"}));
  EXPECT_FALSE(natural_less("cu128", "cu128"));
  EXPECT_TRUE(natural_less("cu12", "cu128"));
}

}  // namespace
}  // namespace fabuild
