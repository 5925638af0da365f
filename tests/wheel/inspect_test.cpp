#include "wheel/inspect.h"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "util/error.h"
#include "util/hash.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

const std::string kInfo = "flash_attn-2.8.3.dist-info";
const std::vector<std::pair<std::string, std::string>> kMinimal = {{kInfo + "/METADATA", "Name: flash_attn\n"}};

// What the Failure of inspecting `path` says, or "" when it is read.
std::string refusal(const fs::path& path, const InspectLimits& limits = {}) {
  const Expected<WheelContents> c = inspect_wheel(path, limits);
  return c ? std::string() : c.error().what;
}

TEST(Inspect, ListsMembersWithTheirHashesAndReadsTheDistInfo) {
  test::ScratchDir dir("inspect");
  const test::TestWheel spec;
  const fs::path whl = spec.write(dir.path());
  const WheelContents c = inspect_wheel(whl).value();
  EXPECT_EQ(c.dist_info, spec.dist_info());
  const std::string init = spec.files.at("flash_attn/__init__.py");
  const WheelMember* m = c.find("flash_attn/__init__.py");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->size, init.size());
  EXPECT_EQ(m->sha256, base64url_nopad(sha256_of(init)));
  ASSERT_TRUE(c.metadata.has_value());
  EXPECT_EQ(c.metadata->first("Version"), "2.8.3+cu128torch2.8cxx11abiTRUE");
  EXPECT_EQ(c.tags(), std::vector<std::string>{"cp312-cp312-linux_x86_64"});
  EXPECT_EQ(c.root_is_purelib(), false);
  ASSERT_TRUE(c.record.has_value());
  EXPECT_EQ(c.record->entries.size(), c.members.size());
}

TEST(Inspect, RefusesAFileThatIsNotAZip) {
  test::ScratchDir dir("inspect");
  const fs::path whl = dir.path() / "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl";
  std::ofstream(whl) << "<html>502 Bad Gateway</html>\n";
  EXPECT_NE(refusal(whl).find("zip"), std::string::npos);
}

TEST(Inspect, RefusesAnEmptyFileAndAMissingOne) {
  test::ScratchDir dir("inspect");
  const fs::path empty = dir.path() / "empty.whl";
  std::ofstream{empty};
  EXPECT_NE(refusal(empty), "");
  EXPECT_NE(refusal(dir.path() / "absent.whl"), "");
}

TEST(Inspect, RefusesAMemberThatEscapesTheInstallRoot) {
  test::ScratchDir dir("inspect");
  for (const std::string evil : {"../evil", "flash_attn/../../evil", "/etc/evil", "flash_attn//x.py", "C:/evil"}) {
    const fs::path whl = dir.path() / "evil.whl";
    auto members = kMinimal;
    members.emplace_back(evil, "boom");
    test::write_zip(whl, members);
    const std::string why = refusal(whl);
    EXPECT_NE(why.find("\"" + evil + "\" is unsafe"), std::string::npos) << evil << ": " << why;
  }
}

TEST(Inspect, RefusesDuplicateMembers) {
  test::ScratchDir dir("inspect");
  const fs::path whl = dir.path() / "dup.whl";
  auto members = kMinimal;
  members.emplace_back("flash_attn/__init__.py", "good");
  members.emplace_back("flash_attn/__init__.py", "evil");
  test::write_zip(whl, members);
  EXPECT_NE(refusal(whl).find("\"flash_attn/__init__.py\" appears twice"), std::string::npos);
}

TEST(Inspect, RefusesTwoDistInfoDirectoriesAndNone) {
  test::ScratchDir dir("inspect");
  const fs::path two = dir.path() / "two.whl";
  auto members = kMinimal;
  members.emplace_back("other-1.0.dist-info/METADATA", "Name: other\n");
  test::write_zip(two, members);
  EXPECT_NE(refusal(two).find("2 .dist-info directories"), std::string::npos);

  const fs::path none = dir.path() / "none.whl";
  test::write_zip(none, {{"flash_attn/__init__.py", ""}});
  EXPECT_NE(refusal(none).find("no top-level .dist-info"), std::string::npos);
}

TEST(Inspect, StopsReadingPastTheByteCap) {
  test::ScratchDir dir("inspect");
  InspectLimits limits;
  limits.max_total_bytes = 256 * 1024;
  // Zeros deflate to almost nothing: the zip is tiny, its contents are not.
  const fs::path one = dir.path() / "one.whl";
  auto members = kMinimal;
  members.emplace_back("flash_attn/zeros.bin", std::string(1 << 20, '\0'));
  test::write_zip(one, members);
  ASSERT_LT(fs::file_size(one), 64u * 1024);
  EXPECT_NE(refusal(one, limits).find("claims 1048576 bytes"), std::string::npos);

  // Members each under the cap, together over it: caught while inflating, whatever the
  // headers claim.
  const fs::path many = dir.path() / "many.whl";
  members = kMinimal;
  for (int i = 0; i < 3; ++i) members.emplace_back("flash_attn/z" + std::to_string(i), std::string(100 * 1024, '\0'));
  test::write_zip(many, members);
  EXPECT_NE(refusal(many, limits).find("inflate to more than 262144 bytes"), std::string::npos);

  EXPECT_EQ(refusal(one), "");  // the default cap lets real-sized wheels through
  EXPECT_EQ(refusal(many), "");
}

TEST(MemberPath, OrdinaryWheelPathsAreSafe) {
  EXPECT_TRUE(safe_member_path("flash_attn/ops/triton/rotary.py"));
  EXPECT_TRUE(safe_member_path("flash_attn-2.8.3.data/purelib/x.py"));
  EXPECT_TRUE(safe_member_path("flash_attn/"));
  EXPECT_EQ(safe_member_path("flash_attn\\..\\evil").error().what, "the path contains a backslash");
  EXPECT_EQ(safe_member_path("./x").error().what, "the path has a \".\" component");
}

}  // namespace
}  // namespace fabuild
