#include "app/verified_stamps.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/fake_files.h"
#include "../support/scratch_dir.h"
#include "util/error.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

struct Filed {
  ScratchDir dir{"verified-stamps"};
  RealFiles files;
  FiledWheel entry;
  WheelExpectation expected;
  Filed() {
    entry.wheel = "fa2.8.3/torch2.8/cu128/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl";
    entry.sha256 = std::string(64, 'a');
    fs::create_directories((dir.path() / entry.wheel).parent_path());
    std::ofstream(dir.path() / entry.wheel) << "wheel bytes";
    expected.dist_name = "flash_attn";
    expected.version = "2.8.3";
    expected.python_tag = expected.abi_tag = "cp312";
    expected.platform_tag = "linux_x86_64";
    expected.required_members = {"flash_attn_2_cuda*.so"};
  }
  [[nodiscard]] fs::path wheel() const { return dir.path() / entry.wheel; }
};

TEST(VerifiedStamps, AStampedWheelIsFreshAcrossRunsUntilItsFileChanges) {
  Filed f;
  {
    VerifiedStamps s(f.files, f.dir.path());
    EXPECT_FALSE(s.fresh("cell", f.entry, f.expected));
    s.stamp("cell", f.entry, f.expected);
    EXPECT_TRUE(s.fresh("cell", f.entry, f.expected));
    ASSERT_TRUE(s.save());
  }
  EXPECT_TRUE(VerifiedStamps(f.files, f.dir.path()).fresh("cell", f.entry, f.expected));
  EXPECT_FALSE(VerifiedStamps(f.files, f.dir.path()).fresh("other-cell", f.entry, f.expected));

  // Rewritten with the same size and its modification time put back: the change time moved.
  const auto mtime = fs::last_write_time(f.wheel());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::ofstream(f.wheel(), std::ios::trunc) << "wheel bytez";
  fs::last_write_time(f.wheel(), mtime);
  EXPECT_FALSE(VerifiedStamps(f.files, f.dir.path()).fresh("cell", f.entry, f.expected));
}

TEST(VerifiedStamps, AnotherDigestOrExpectationIsNotFresh) {
  Filed f;
  VerifiedStamps s(f.files, f.dir.path());
  s.stamp("cell", f.entry, f.expected);
  FiledWheel other = f.entry;
  other.sha256 = std::string(64, 'b');
  EXPECT_FALSE(s.fresh("cell", other, f.expected));
  WheelExpectation newer = f.expected;
  newer.version = "2.8.3+cu128torch2.8cxx11abiTRUE";
  EXPECT_FALSE(s.fresh("cell", f.entry, newer));
  fs::remove(f.wheel());
  EXPECT_FALSE(s.fresh("cell", f.entry, f.expected));
}

TEST(VerifiedStamps, ADamagedFileMeansCheckingEverything) {
  Filed f;
  std::ofstream(f.dir.path() / kVerifiedStampsName) << "{\"version\": 1, \"cells\": {";
  VerifiedStamps s(f.files, f.dir.path());
  EXPECT_FALSE(s.fresh("cell", f.entry, f.expected));
  s.stamp("cell", f.entry, f.expected);
  ASSERT_TRUE(s.save());
  EXPECT_TRUE(VerifiedStamps(f.files, f.dir.path()).fresh("cell", f.entry, f.expected));
}

// Cells file on worker threads: stamps made at the same moment are all kept.
TEST(VerifiedStamps, StampsMadeAtOnceAreAllKept) {
  Filed f;
  std::vector<std::thread> filers;
  for (int i = 0; i < 8; ++i) {
    filers.emplace_back([&f, i] {
      for (int j = 0; j < 5; ++j)
        VerifiedStamps::stamp_one(f.files, f.dir.path(), "cell" + std::to_string(i * 5 + j), f.entry, f.expected);
    });
  }
  for (auto& t : filers) t.join();
  const VerifiedStamps after(f.files, f.dir.path());
  for (int i = 0; i < 40; ++i) EXPECT_TRUE(after.fresh("cell" + std::to_string(i), f.entry, f.expected)) << i;
}

// The stamps only save the next run a read: a file that cannot be written is a failure naming
// it, for the caller to say, not an exception that would fail a cell whose wheel is filed.
TEST(VerifiedStamps, StampsThatCannotBeWrittenAreAFailureNamingTheFile) {
  test::FakeFiles files;
  files.add_file("/wh/fa2.8.3/w.whl", "wheel");
  files.fail_on(test::FileOp::kWrite, "/wh/.verified.json");
  FiledWheel entry;
  entry.wheel = "fa2.8.3/w.whl";
  VerifiedStamps s(files, "/wh");
  s.stamp("cell", entry, WheelExpectation{});
  const Expected<void> saved = s.save();
  ASSERT_FALSE(saved);
  EXPECT_NE(saved.error().what.find("/wh/.verified.json"), std::string::npos) << saved.error().what;
  EXPECT_NE(saved.error().hint.find("the next run reads those wheels again"), std::string::npos);
  EXPECT_FALSE(files.exists("/wh/.verified.json"));
  const Expected<void> one = VerifiedStamps::stamp_one(files, "/wh", "cell", entry, WheelExpectation{});
  EXPECT_FALSE(one);
}

}  // namespace
}  // namespace fabuild
