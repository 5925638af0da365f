#include "source/archive.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../support/archive_builder.h"
#include "../support/scratch_dir.h"
#include "served_file.h"
#include "util/error.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::ArchiveEntry;
using test::ArchiveFormat;
using test::slurp_file;
using E = ArchiveEntry;

class ArchiveTest : public ::testing::Test {
 protected:
  fs::path archive(ArchiveFormat format = ArchiveFormat::kTarGz) const {
    switch (format) {
      case ArchiveFormat::kTarGz:
        return scratch_.path() / "in" / "a.tar.gz";
      case ArchiveFormat::kTar:
        return scratch_.path() / "in" / "a.tar";
      case ArchiveFormat::kZip:
        return scratch_.path() / "in" / "a.zip";
    }
    return {};
  }
  // Apart per format, so that one test can try several and check each leaves nothing.
  fs::path dest(ArchiveFormat format = ArchiveFormat::kTarGz) const {
    return scratch_.path() / ("work-" + std::to_string(static_cast<int>(format))) / "src";
  }

  void write(const std::vector<ArchiveEntry>& entries, ArchiveFormat format = ArchiveFormat::kTarGz) {
    fs::create_directories(archive(format).parent_path());
    test::write_archive(archive(format), format, entries);
  }

  // Extracting must fail saying `why`, naming the archive, and leave nothing: no dest, no staging dir.
  void expect_refused(const std::string& why, ExtractLimits limits = {}, ArchiveFormat format = ArchiveFormat::kTarGz) {
    const Expected<void> done = extract_archive(archive(format), dest(format), limits);
    if (done) {
      ADD_FAILURE() << "extracted an archive that should be refused for: " << why;
    } else {
      EXPECT_NE(done.error().what.find(why), std::string::npos) << done.error().what;
      EXPECT_NE(done.error().what.find(archive(format).string()), std::string::npos) << done.error().what;
      EXPECT_NE(done.error().hint.find("sha256"), std::string::npos) << done.error().hint;
    }
    EXPECT_FALSE(fs::exists(fs::symlink_status(dest(format))));
    if (fs::exists(dest(format).parent_path())) {
      EXPECT_TRUE(fs::is_empty(dest(format).parent_path())) << "a staging directory was left behind";
    }
  }

  test::ScratchDir scratch_{"fabuild-archive"};
};

std::vector<ArchiveEntry> sdist_entries() {
  return {E::dir("flash_attn-2.8.3/"), E::file("flash_attn-2.8.3/setup.py", "print('hi')\n"),
          E::file("flash_attn-2.8.3/csrc/flash_api.cpp", "int main() {}\n"),
          E::symlink("flash_attn-2.8.3/csrc/setup_link.py", "../setup.py")};
}

TEST_F(ArchiveTest, GoodSdistExtractsAndSdistRootFindsTheTopDirectory) {
  for (const auto format : {ArchiveFormat::kTarGz, ArchiveFormat::kTar, ArchiveFormat::kZip}) {
    SCOPED_TRACE(archive(format).filename().string());
    write(sdist_entries(), format);
    ASSERT_TRUE(extract_archive(archive(format), dest(format)));
    const fs::path root = sdist_root(dest(format)).value();
    EXPECT_EQ(root, dest(format) / "flash_attn-2.8.3");
    EXPECT_EQ(slurp_file(root / "setup.py"), "print('hi')\n");
    EXPECT_EQ(slurp_file(root / "csrc" / "flash_api.cpp"), "int main() {}\n");
    EXPECT_TRUE(fs::is_symlink(root / "csrc" / "setup_link.py"));
    EXPECT_EQ(slurp_file(root / "csrc" / "setup_link.py"), "print('hi')\n");
    const std::vector<fs::path> siblings(fs::directory_iterator(dest(format).parent_path()), fs::directory_iterator());
    EXPECT_EQ(siblings.size(), 1u) << "the staging directory must become dest, not stay beside it";
  }
}

TEST_F(ArchiveTest, HardlinkInsideTheTreeIsExtracted) {
  write({E::file("p/a", "same"), E::hardlink("p/b", "p/a")});
  ASSERT_TRUE(extract_archive(archive(), dest()));
  EXPECT_EQ(slurp_file(dest() / "p" / "b"), "same");
}

TEST_F(ArchiveTest, EmptyDestDirectoryIsReplaced) {
  write(sdist_entries());
  fs::create_directories(dest());
  ASSERT_TRUE(extract_archive(archive(), dest()));
  EXPECT_TRUE(fs::exists(dest() / "flash_attn-2.8.3" / "setup.py"));
}

TEST_F(ArchiveTest, NonEmptyDestIsRefusedAndUntouched) {
  write(sdist_entries());
  fs::create_directories(dest());
  test::write_file(dest() / "keep", "mine");
  const Expected<void> done = extract_archive(archive(), dest());
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().what.find("already exists"), std::string::npos) << done.error().what;
  EXPECT_EQ(slurp_file(dest() / "keep"), "mine");
  EXPECT_FALSE(fs::exists(dest() / "flash_attn-2.8.3"));
}

// Each hostile shape in both tar.gz and zip: the zip reader is a different code path.
constexpr ArchiveFormat kHostileFormats[] = {ArchiveFormat::kTarGz, ArchiveFormat::kZip};

TEST_F(ArchiveTest, AbsolutePathIsRefused) {
  for (const auto format : kHostileFormats) {
    SCOPED_TRACE(archive(format).filename().string());
    write({E::file("p/ok", "x"), E::file("/tmp/fabuild-absolute-evil", "x")}, format);
    expect_refused("'/tmp/fabuild-absolute-evil' is an absolute path", {}, format);
    EXPECT_FALSE(fs::exists("/tmp/fabuild-absolute-evil"));
  }
}

TEST_F(ArchiveTest, DotDotIsRefused) {
  for (const auto format : kHostileFormats) {
    SCOPED_TRACE(archive(format).filename().string());
    write({E::file("p/../../evil", "x")}, format);
    expect_refused("'p/../../evil' has a '..' component", {}, format);
    EXPECT_FALSE(fs::exists(scratch_.path() / "evil"));
  }
}

TEST_F(ArchiveTest, SymlinkToEtcIsRefused) {
  for (const auto format : kHostileFormats) {
    SCOPED_TRACE(archive(format).filename().string());
    write({E::symlink("p/etc", "/etc")}, format);
    expect_refused("symlink 'p/etc' -> '/etc' points outside the archive", {}, format);
  }
}

TEST_F(ArchiveTest, SymlinkClimbingOutIsRefused) {
  for (const auto format : kHostileFormats) {
    SCOPED_TRACE(archive(format).filename().string());
    write({E::symlink("p/up", "../../..")}, format);
    expect_refused("symlink 'p/up' -> '../../..' points outside", {}, format);
  }
}

// Each link alone stays inside by name; followed through "p/d/up" the second one leaves.
TEST_F(ArchiveTest, SymlinkChainEscapingIsRefused) {
  for (const auto format : kHostileFormats) {
    SCOPED_TRACE(archive(format).filename().string());
    write({E::dir("p/d/"), E::symlink("p/d/up", ".."), E::symlink("p/d/out", "up/../..")}, format);
    expect_refused("symlink 'p/d/out' -> 'up/../..' leads outside the archive", {}, format);
  }
}

TEST_F(ArchiveTest, WritingThroughASymlinkIsRefused) {
  for (const auto format : kHostileFormats) {
    SCOPED_TRACE(archive(format).filename().string());
    write({E::dir("p/real/"), E::symlink("p/link", "real"), E::file("p/link/f", "x")}, format);
    expect_refused("cannot extract 'p/link/f'", {}, format);
  }
}

TEST_F(ArchiveTest, HardlinkToAbsolutePathIsRefused) {
  write({E::hardlink("p/passwd", "/etc/passwd")});
  expect_refused(
      "hard link 'p/passwd' -> '/etc/passwd' points outside the archive ('/etc/passwd' is an absolute path)");
}

TEST_F(ArchiveTest, HardlinkClimbingOutIsRefused) {
  write({E::hardlink("p/x", "../outside")});
  expect_refused("'../outside' has a '..' component");
}

TEST_F(ArchiveTest, DeviceNodeIsRefused) {
  write({E::file("p/ok", "x"), E::make(E::Type::kCharDevice, "p/null")});
  expect_refused("'p/null' is a character device");
}

TEST_F(ArchiveTest, FifoIsRefused) {
  write({E::make(E::Type::kFifo, "p/pipe")});
  expect_refused("'p/pipe' is a fifo");
}

TEST_F(ArchiveTest, DecompressionBombIsRefused) {
  ArchiveEntry bomb = E::file("p/zeros", "");
  bomb.zeros = 32 << 20;  // 32 MiB of zeros: a few tens of KiB once gzipped
  write({bomb});
  ASSERT_LT(fs::file_size(archive()), 100u * 1024) << "not a bomb: the archive itself is large";
  ExtractLimits limits;
  limits.max_total_bytes = 1 << 20;
  expect_refused("expands past the limit of 1048576 bytes", limits);
}

TEST_F(ArchiveTest, ABombUnderTheByteCapIsRefusedByItsRatio) {
  // 96 MiB of zeros in a few hundred KiB: under the 4 GiB cap, far past 200 times its size
  // plus the 64 MiB allowance. The refused tree is not left behind.
  ArchiveEntry bomb = E::file("p/zeros", "");
  bomb.zeros = 96 << 20;
  write({bomb});
  ASSERT_LT(fs::file_size(archive()), 200u * 1024) << "not a bomb";
  expect_refused("more than 200 times its own", ExtractLimits{});
  EXPECT_FALSE(fs::exists(dest()));
  // With the ratio cap off it is under the byte cap.
  ExtractLimits no_ratio;
  no_ratio.max_ratio = 0;
  EXPECT_TRUE(extract_archive(archive(), dest(), no_ratio));
}

TEST_F(ArchiveTest, ManySmallFilesPastTheByteCapAreRefused) {
  std::vector<ArchiveEntry> entries;
  for (int i = 0; i < 5; ++i) entries.push_back(E::file("p/f" + std::to_string(i), std::string(300 * 1024, 'z')));
  write(entries);
  ExtractLimits limits;
  limits.max_total_bytes = 1 << 20;  // each file fits; together they do not
  expect_refused("expands past the limit", limits);
}

TEST_F(ArchiveTest, TooManyEntriesAreRefused) {
  std::vector<ArchiveEntry> entries;
  for (int i = 0; i < 20; ++i) entries.push_back(E::file("p/f" + std::to_string(i), "x"));
  write(entries);
  ExtractLimits limits;
  limits.max_entries = 10;
  expect_refused("more than 10 entries", limits);
}

TEST_F(ArchiveTest, GarbageIsRefused) {
  fs::create_directories(archive().parent_path());
  test::write_file(archive(), std::string(4096, '\x42'));
  expect_refused("cannot read it");
}

TEST_F(ArchiveTest, SdistRootNeedsExactlyOneTopDirectory) {
  write({E::file("a/setup.py", "x"), E::file("b/setup.py", "x"), E::file("README", "x")});
  ASSERT_TRUE(extract_archive(archive(), dest()));
  const Expected<fs::path> root = sdist_root(dest());
  ASSERT_FALSE(root) << "picked a root out of several";
  EXPECT_NE(root.error().what.find("found README, a, b"), std::string::npos) << root.error().what;
}

TEST_F(ArchiveTest, SdistRootOfASingleFileIsAnError) {
  write({E::file("setup.py", "x")});
  ASSERT_TRUE(extract_archive(archive(), dest()));
  EXPECT_FALSE(sdist_root(dest()));
}

}  // namespace
}  // namespace fabuild
