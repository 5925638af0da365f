// A library cell's archive (wheel/library_archive.h) and its filing: the same tree gives the same
// bytes at any time, links stay links and never leave the tree, and the archive is filed, summed
// and recorded as a wheel is, under "library" in the manifest.

#include "wheel/library_archive.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "../support/scratch_dir.h"
#include "util/error.h"
#include "util/hash.h"
#include "wheel/filing.h"
#include "wheel/manifest.h"
#include "wheel/wheelhouse.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An installed library as the recipe leaves it: a versioned .so with its links, a header, a
// CMake package; written with the given mode on the library and modification times of "now".
void install_tree(const fs::path& root, const std::string& library_bytes) {
  fs::create_directories(root / "lib" / "cmake" / "flash_attn");
  fs::create_directories(root / "include" / "flash_attn");
  std::ofstream(root / "lib" / "libflash_attn.so.3.0.0") << library_bytes;
  fs::permissions(root / "lib" / "libflash_attn.so.3.0.0", fs::perms::owner_all | fs::perms::group_read);
  fs::create_symlink("libflash_attn.so.3.0.0", root / "lib" / "libflash_attn.so.1");
  fs::create_symlink("libflash_attn.so.1", root / "lib" / "libflash_attn.so");
  std::ofstream(root / "include" / "flash_attn" / "flash_attn.h") << "/* the C API */\n";
  std::ofstream(root / "lib" / "cmake" / "flash_attn" / "flash_attnConfig.cmake") << "# config\n";
}

TEST(LibraryArchive, TheSameTreeGivesTheSameBytesWheneverItIsPacked) {
  test::ScratchDir dir("libarchive");
  install_tree(dir.path() / "a", "ELF...");
  ASSERT_TRUE(pack_library_archive(dir.path() / "a", "flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64",
                                   dir.path() / "a.tar.gz"));
  // Another tree with the same content, made a second later, in another order.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  fs::create_directories(dir.path() / "b" / "include" / "flash_attn");
  std::ofstream(dir.path() / "b" / "include" / "flash_attn" / "flash_attn.h") << "/* the C API */\n";
  install_tree(dir.path() / "b", "ELF...");
  ASSERT_TRUE(pack_library_archive(dir.path() / "b", "flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64",
                                   dir.path() / "b.tar.gz"));
  const std::string a = test::ScratchDir::read(dir.path() / "a.tar.gz");
  EXPECT_EQ(a, test::ScratchDir::read(dir.path() / "b.tar.gz"));
  ASSERT_GT(a.size(), 10u);
  EXPECT_EQ(a.substr(4, 4), std::string(4, '\0')) << "the gzip header carries a time";
}

TEST(LibraryArchive, EntriesAreSortedNormalisedAndLinksStayLinks) {
  test::ScratchDir dir("libarchive");
  install_tree(dir.path() / "tree", "ELF...");
  const fs::path out = dir.path() / "x.tar.gz";
  ASSERT_TRUE(pack_library_archive(dir.path() / "tree", "top", out));
  std::vector<std::string> paths;
  const Expected<std::vector<ArchiveMember>> members = list_archive(out);
  ASSERT_TRUE(members) << members.error().what;
  for (const ArchiveMember& m : *members) {
    paths.push_back(m.path);
    EXPECT_EQ(m.mtime, kLibraryArchiveMtime) << m.path;
    EXPECT_EQ(m.uid, 0) << m.path;
    EXPECT_EQ(m.gid, 0) << m.path;
    if (m.path == "top/lib/libflash_attn.so") {
      EXPECT_EQ(m.kind, ArchiveMember::Kind::kSymlink);
      EXPECT_EQ(m.link, "libflash_attn.so.1");
    }
    if (m.path == "top/lib/libflash_attn.so.3.0.0") {
      EXPECT_EQ(m.mode, 0755);  // executable: 0755
    }
    if (m.path == "top/include/flash_attn/flash_attn.h") {
      EXPECT_EQ(m.mode, 0644);
    }
  }
  // Directories end in "/", as tar writes them.
  EXPECT_THAT(
      paths,
      ElementsAre("top/", "top/include/", "top/include/flash_attn/", "top/include/flash_attn/flash_attn.h", "top/lib/",
                  "top/lib/cmake/", "top/lib/cmake/flash_attn/", "top/lib/cmake/flash_attn/flash_attnConfig.cmake",
                  "top/lib/libflash_attn.so", "top/lib/libflash_attn.so.1", "top/lib/libflash_attn.so.3.0.0"));
}

TEST(LibraryArchive, ALinkOutOfTheTreeIsRefusedAndNothingIsLeft) {
  test::ScratchDir dir("libarchive");
  install_tree(dir.path() / "tree", "ELF...");
  fs::create_symlink("../../secret", dir.path() / "tree" / "lib" / "escape");
  const Expected<void> packed = pack_library_archive(dir.path() / "tree", "top", dir.path() / "x.tar.gz");
  ASSERT_FALSE(packed);
  EXPECT_THAT(packed.error().what, HasSubstr("a symbolic link to ../../secret, outside the library's tree"));
  EXPECT_FALSE(fs::exists(dir.path() / "x.tar.gz"));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr(".tmp")));
}

TEST(LibraryArchive, IsFiledSummedAndRecordedAsALibrary) {
  test::ScratchDir dir("libarchive");
  install_tree(dir.path() / "tree", "ELF...");
  fs::create_directories(dir.path() / "dist");
  const fs::path staged = dir.path() / "dist" / "flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64.tar.gz";
  ASSERT_TRUE(pack_library_archive(dir.path() / "tree", "flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64", staged));
  const std::string digest = hex(sha256_of_file(staged).value());
  const fs::path house = dir.path() / "house";
  const fs::path dest = house / "fa3.0.0/lib/cu130/minimal";
  FiledWheel entry;
  entry.library = true;
  entry.exports = {{"flash_attn_varlen_fwd", "flash_attn_varlen_fwd"}};
  EXPECT_TRUE(file_cell_wheel(house, "fa3.0.0-lib-cu130-linux_x86_64-minimal", staged, dest, entry));
  EXPECT_EQ(read_sha256sums(dest / kSha256SumsName).value().at(staged.filename().string()), digest);
  const std::string manifest = test::ScratchDir::read(house / kManifestName);
  EXPECT_THAT(manifest, HasSubstr("\"library\": \"fa3.0.0/lib/cu130/minimal/flash_attn_3-3.0.0-lib-cu130-minimal-"));
  EXPECT_THAT(manifest, ::testing::Not(HasSubstr("\"wheel\"")));
  const auto filed = find_filed(house, "fa3.0.0-lib-cu130-linux_x86_64-minimal");
  ASSERT_TRUE(filed);
  EXPECT_TRUE(filed->library);
  EXPECT_EQ(filed->sha256, digest);
  EXPECT_EQ(check_filed(house, *filed), FiledState::kIntact);
  // SHA256SUMS rewritten from scratch covers it too.
  EXPECT_TRUE(write_sha256sums(dest));
  EXPECT_EQ(read_sha256sums(dest / kSha256SumsName).value().size(), 1u);
}

TEST(LibraryArchive, FiledNamesAreWheelsAndArchives) {
  EXPECT_TRUE(is_filed_name("flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl"));
  EXPECT_TRUE(is_filed_name("flash_attn_3-3.0.0-lib-cu130-full-linux_x86_64.tar.gz"));
  EXPECT_FALSE(is_filed_name("build.log"));
  EXPECT_FALSE(is_filed_name(".tar.gz"));
}

}  // namespace
}  // namespace fabuild
