#include "wheel/wheel_name.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace fabuild {
namespace {

TEST(WheelName, ParsesAFlashAttentionWheelWithItsLocalLabel) {
  const WheelName n =
      parse_wheel_name("flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl").value();
  EXPECT_EQ(n.distribution, "flash_attn");
  EXPECT_EQ(n.version, "2.8.3+cu128torch2.8cxx11abiTRUE");
  EXPECT_EQ(n.public_version(), "2.8.3");
  EXPECT_EQ(n.local_label(), "cu128torch2.8cxx11abiTRUE");
  EXPECT_EQ(n.build, "");
  EXPECT_EQ(n.tag(), "cp312-cp312-linux_x86_64");
}

TEST(WheelName, ReadsTheOptionalBuildTag) {
  const WheelName n = parse_wheel_name("flash_attn-2.8.3-1-cp312-cp312-manylinux_2_28_x86_64.whl").value();
  EXPECT_EQ(n.build, "1");
  EXPECT_EQ(n.python_tag, "cp312");
  EXPECT_EQ(n.platform_tag, "manylinux_2_28_x86_64");
  EXPECT_EQ(n.local_label(), "");
}

// Each of these must be refused, and the message must say which rule it broke.
struct BadName {
  const char* name;
  const char* why;
};

class WheelNameRejects : public ::testing::TestWithParam<BadName> {};

TEST_P(WheelNameRejects, WithAReason) {
  const Expected<WheelName> n = parse_wheel_name(GetParam().name);
  ASSERT_FALSE(n.has_value()) << GetParam().name << " was accepted";
  EXPECT_NE(n.error().what.find(GetParam().why), std::string::npos) << n.error().what;
}

INSTANTIATE_TEST_SUITE_P(
    Names, WheelNameRejects,
    ::testing::Values(BadName{"wheelhouse/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", "path separator"},
                      BadName{"..\\flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", "path separator"},
                      BadName{"flash_attn-2.8.3..-cp312-cp312-linux_x86_64.whl", "\"..\""},
                      BadName{"flash_attn-2.8.3-cp312-cp312-linux_x86_64.zip", "\".whl\""},
                      BadName{"flash_attn-2.8.3-cp312-linux_x86_64.whl", "4 dash-separated parts"},
                      BadName{"flash_attn-2.8.3-1-2-cp312-cp312-linux_x86_64.whl", "7 dash-separated parts"},
                      BadName{"flash_attn--cp312-cp312-linux_x86_64.whl", "part 2 is empty"},
                      BadName{"flash_attn-2.8.3-x1-cp312-cp312-linux_x86_64.whl", "does not start with a digit"},
                      BadName{"flash attn-2.8.3-cp312-cp312-linux_x86_64.whl", "character"},
                      BadName{"flash_attn-2.8.3+-cp312-cp312-linux_x86_64.whl", "local label"}));

TEST(ProjectName, NormalisesPerPep503) {
  EXPECT_EQ(normalize_project_name("Flash_Attn"), "flash-attn");
  EXPECT_EQ(normalize_project_name("flash-attn"), "flash-attn");
  EXPECT_EQ(normalize_project_name("flash._-attn"), "flash-attn");
  EXPECT_NE(normalize_project_name("flash_attn"), normalize_project_name("flashattn"));
}

TEST(SameVersion, LabelCaseIsIrrelevantButItsContentIsNot) {
  // setuptools normalises the label to lower case in METADATA; pip sees one version.
  EXPECT_TRUE(same_version("2.8.3+cu128torch2.8cxx11abiTRUE", "2.8.3+cu128torch2.8cxx11abitrue"));
  EXPECT_TRUE(same_version("2.8.3+cu128_torch2.8", "2.8.3+cu128.torch2.8"));
  EXPECT_FALSE(same_version("2.8.3+cu128torch2.8cxx11abiTRUE", "2.8.3+cu126torch2.8cxx11abiTRUE"));
  EXPECT_FALSE(same_version("2.8.3+cu128torch2.8cxx11abiTRUE", "2.8.3+cu128torch2.8cxx11abiFALSE"));
  EXPECT_FALSE(same_version("2.8.3+cu128torch2.8cxx11abiTRUE", "2.8.3"));
}

}  // namespace
}  // namespace fabuild
