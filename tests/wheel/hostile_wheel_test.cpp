// Wheels crafted to hurt the reader rather than to install: a WHEEL file whose compressed tag
// set multiplies out to hundreds of millions of tags (found by running the fuzz harness on a
// hand-made input: 3.6 KB took minutes and gigabytes before the cap), and thousands of Tag lines.
// Verification stays fast and its message short.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "wheel/dist_info.h"
#include "wheel/verify.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

std::string dotted(const std::string& part, int n) {
  std::string out = part;
  for (int i = 1; i < n; ++i) out += "." + part;
  return out;
}

TEST(HostileWheel, ATagSetThatWouldMultiplyOutPastTheCapIsKeptAsWritten) {
  const std::string bomb = dotted("a", 600) + "-" + dotted("b", 600) + "-" + dotted("c", 600);  // 2.16e8 tags
  const auto start = Clock::now();
  const auto tags = expand_tags({bomb, "py2.py3-none-any"});
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(tags, (std::vector<std::string>{bomb, "py2-none-any", "py3-none-any"}));
  // Up to the cap a set still expands: 8 x 8 x 16 = 1024.
  EXPECT_EQ(expand_tags({dotted("p", 8) + "-" + dotted("a", 8) + "-" + dotted("l", 16)}).size(), kMaxExpandedTags);
  EXPECT_EQ(expand_tags({dotted("p", 8) + "-" + dotted("a", 8) + "-" + dotted("l", 17)}).size(), 1u);
}

TEST(HostileWheel, VerifyingAWheelWithATagBombIsQuickAndSaysSoBriefly) {
  test::ScratchDir dir("fabuild-hostile-wheel");
  const std::string bomb = dotted("cp312", 600) + "-" + dotted("cp312", 600) + "-" + dotted("linux_x86_64", 600);
  const std::string info = "flash_attn-2.8.3.dist-info";
  const auto wheel = dir.path() / "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl";
  test::write_zip(wheel, {{info + "/METADATA", "Metadata-Version: 2.1\nName: flash_attn\nVersion: 2.8.3\n"},
                          {info + "/WHEEL", "Wheel-Version: 1.0\nTag: " + bomb + "\n"}});
  WheelExpectation e;
  e.dist_name = "flash_attn";
  e.version = "2.8.3";
  e.python_tag = e.abi_tag = "cp312";
  e.platform_tag = "linux_x86_64";
  const auto start = Clock::now();
  const WheelVerdict v = verify_wheel(wheel, e);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  ASSERT_FALSE(v.ok());
  std::size_t longest = 0;
  for (const auto& p : v.problems) longest = std::max(longest, p.size());
  EXPECT_LT(longest, 2000u) << "a problem quotes the whole hostile line";
}

TEST(HostileWheel, ThousandsOfTagLinesAreNamedAFewAtATime) {
  test::ScratchDir dir("fabuild-hostile-wheel");
  const std::string info = "flash_attn-2.8.3.dist-info";
  std::string tags = "Wheel-Version: 1.0\n";
  for (int i = 0; i < 5001; ++i) tags += "Tag: cp3" + std::to_string(i) + "-none-any\n";
  const auto wheel = dir.path() / "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl";
  test::write_zip(wheel, {{info + "/METADATA", "Metadata-Version: 2.1\nName: flash_attn\nVersion: 2.8.3\n"},
                          {info + "/WHEEL", tags}});
  WheelExpectation e;
  e.dist_name = "flash_attn";
  e.version = "2.8.3";
  e.python_tag = e.abi_tag = "cp312";
  e.platform_tag = "linux_x86_64";
  const WheelVerdict v = verify_wheel(wheel, e);
  bool said = false;
  for (const auto& p : v.problems) {
    if (p.find("has Tag") == std::string::npos) continue;
    said = true;
    EXPECT_THAT(p, HasSubstr("and 4993 more"));
    EXPECT_LT(p.size(), 2000u);
  }
  EXPECT_TRUE(said) << ::testing::PrintToString(v.problems);
}

}  // namespace
}  // namespace fabuild
