// A verified wheel retagged with a manylinux policy (wheel/retag.h): WHEEL's Tag lines and
// RECORD's line for WHEEL change, every other member is the same bytes, and the result passes
// verification under the new tag, as the build's file did under linux_x86_64.

#include "wheel/retag.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "../support/archive_builder.h"
#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "util/error.h"
#include "util/hash.h"
#include "wheel/inspect.h"
#include "wheel/verify.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

WheelExpectation manylinux_cp312() {
  WheelExpectation e;
  e.dist_name = "flash_attn";
  e.version = "2.8.3+cu128torch2.8cxx11abiTRUE";
  e.python_tag = "cp312";
  e.abi_tag = "cp312";
  e.platform_tag = "manylinux_2_28_x86_64";
  e.built_platform_tag = "linux_x86_64";
  e.required_members = {"flash_attn_2_cuda*.so"};
  return e;
}

TEST(Retag, TheWheelPassesUnderItsNewTagWithEveryOtherMemberUnchanged) {
  test::ScratchDir dir("retag");
  const fs::path built = test::TestWheel{}.write(dir.path());
  EXPECT_THAT(verify_wheel(built, manylinux_cp312()).problems, IsEmpty()) << "the build's own name and tag";
  const fs::path out = dir.path() / "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-manylinux_2_28_x86_64.whl";
  ASSERT_TRUE(retag_wheel(built, out, "manylinux_2_28_x86_64"));
  const WheelVerdict v = verify_wheel(out, manylinux_cp312());
  EXPECT_THAT(v.problems, IsEmpty());
  EXPECT_THAT(v.info.tags, ElementsAre("cp312-cp312-manylinux_2_28_x86_64"));
  const WheelContents before = inspect_wheel(built).value();
  const WheelContents after = inspect_wheel(out).value();
  ASSERT_EQ(before.members.size(), after.members.size());
  for (std::size_t i = 0; i < before.members.size(); ++i) {
    EXPECT_EQ(before.members[i].path, after.members[i].path);
    if (!before.members[i].path.ends_with("/WHEEL") && !before.members[i].path.ends_with("/RECORD")) {
      EXPECT_EQ(before.members[i].sha256, after.members[i].sha256) << before.members[i].path;
    }
  }
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
}

TEST(Retag, AFileNamedForOneTagAndTaggedAnotherFails) {
  test::ScratchDir dir("retag");
  test::TestWheel w;
  w.tag = "cp312-cp312-manylinux_2_28_x86_64";  // named manylinux, WHEEL says so too: fine
  EXPECT_THAT(verify_wheel(w.write(dir.path()), manylinux_cp312()).problems, IsEmpty());
  const fs::path built = test::TestWheel{}.write(dir.path());
  const fs::path renamed =
      dir.path() / "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-manylinux_2_28_x86_64.whl";
  fs::rename(built, renamed);  // a rename is no retag: WHEEL still says linux_x86_64
  EXPECT_THAT(
      verify_wheel(renamed, manylinux_cp312()).problems,
      ElementsAre(HasSubstr("has Tag \"cp312-cp312-linux_x86_64\", not \"cp312-cp312-manylinux_2_28_x86_64\"")));
}

TEST(Retag, ABrokenWheelLeavesNothing) {
  test::ScratchDir dir("retag");
  const fs::path bad = dir.path() / "bad.whl";
  std::ofstream(bad) << "not a zip";
  const fs::path out = dir.path() / "out.whl";
  const Expected<void> retagged = retag_wheel(bad, out, "manylinux_2_28_x86_64");
  ASSERT_FALSE(retagged);
  EXPECT_NE(retagged.error().what.find(bad.string()), std::string::npos) << retagged.error().what;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
}

// The machine's time zone while it runs (a POSIX TZ string: no zone database needed).
class TimeZone {
 public:
  explicit TimeZone(const char* tz) {
    if (const char* was = std::getenv("TZ")) was_ = was;
    ::setenv("TZ", tz, 1);
    ::tzset();
  }
  ~TimeZone() {
    if (was_) {
      ::setenv("TZ", was_->c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }
  TimeZone(const TimeZone&) = delete;
  TimeZone& operator=(const TimeZone&) = delete;

 private:
  std::optional<std::string> was_;
};

// A wheel whose members carry a time, retagged in three zones: one SHA-256.
TEST(Retag, TheSameWheelRetaggedInAnyTimeZoneIsTheSameBytes) {
  test::ScratchDir dir("retag");
  const fs::path built = dir.path() / "a-1.0-cp312-cp312-linux_x86_64.whl";
  using E = test::ArchiveEntry;
  test::write_archive(built, test::ArchiveFormat::kZip,
                      {E::file("a/__init__.py", "x = 1\n"),
                       E::file("a-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp312-cp312-linux_x86_64\n"),
                       E::file("a-1.0.dist-info/RECORD", "a-1.0.dist-info/WHEEL,,\n")});
  std::vector<std::string> digests;
  for (const char* tz : {"UTC0", "JST-9", "EST5EDT"}) {
    const TimeZone zone(tz);
    const fs::path out = dir.path() / (std::string(tz) + ".whl");
    ASSERT_TRUE(retag_wheel(built, out, "manylinux_2_28_x86_64")) << tz;
    digests.push_back(hex(sha256_of_file(out).value()));
  }
  EXPECT_EQ(digests[0], digests[1]) << "UTC and Tokyo";
  EXPECT_EQ(digests[0], digests[2]) << "UTC and New York";
}

TEST(Retag, PolicyNamesTheirGlibc) {
  EXPECT_EQ(manylinux_glibc("manylinux_2_28"), "2.28");
  EXPECT_EQ(manylinux_glibc("manylinux_2_17"), "2.17");
  EXPECT_FALSE(manylinux_glibc("manylinux2014").has_value());
  EXPECT_FALSE(manylinux_glibc("linux").has_value());
}

}  // namespace
}  // namespace fabuild
