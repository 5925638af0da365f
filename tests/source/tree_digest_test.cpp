// A directory source's tree digest (source/tree_digest.h): its files' bytes and paths, nothing
// of where it lies, its times, its modes or its version control.

#include "source/tree_digest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

void put(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

void make_tree(const fs::path& root) {
  put(root / "setup.py", "setup()\n");
  put(root / "csrc" / "kernel.cu", "__global__ void k() {}\n");
  put(root / "csrc" / "b" / "api.cpp", "int api();\n");
}

TEST(TreeDigest, IsSha256sumsLinesOfItsFilesInPathOrder) {
  const test::ScratchDir scratch("fabuild-tree");
  make_tree(scratch.path() / "a");
  const RealFiles files;
  const auto digest = tree_sha256(files, scratch.path() / "a");
  ASSERT_TRUE(digest) << digest.error().what;
  const std::string lines = hex(sha256_of("int api();\n")) + "  csrc/b/api.cpp\n" +
                            hex(sha256_of("__global__ void k() {}\n")) + "  csrc/kernel.cu\n" +
                            hex(sha256_of("setup()\n")) + "  setup.py\n";
  EXPECT_EQ(hex(*digest), hex(sha256_of(lines)));
}

TEST(TreeDigest, PathsAreOrderedByTheirBytesAsSortDoesNotByElement) {
  const test::ScratchDir scratch("fabuild-tree");
  put(scratch.path() / "a" / "b", "1");
  put(scratch.path() / "a-b", "2");  // '-' sorts before '/': "a-b" comes first
  const std::string lines = hex(sha256_of("2")) + "  a-b\n" + hex(sha256_of("1")) + "  a/b\n";
  EXPECT_EQ(hex(tree_sha256(RealFiles{}, scratch.path()).value()), hex(sha256_of(lines)));
}

TEST(TreeDigest, TheSameFilesElsewhereWithOtherTimesModesAndGitAreOneDigestAndAByteIsAnother) {
  const test::ScratchDir scratch("fabuild-tree");
  make_tree(scratch.path() / "a");
  make_tree(scratch.path() / "elsewhere" / "b");
  put(scratch.path() / "elsewhere" / "b" / ".git" / "index", "anything");
  fs::permissions(scratch.path() / "elsewhere" / "b" / "setup.py", fs::perms::owner_exec, fs::perm_options::add);
  fs::last_write_time(scratch.path() / "elsewhere" / "b" / "setup.py", fs::file_time_type{});
  const RealFiles files;
  const auto a = tree_sha256(files, scratch.path() / "a");
  const auto b = tree_sha256(files, scratch.path() / "elsewhere" / "b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(hex(*a), hex(*b));
  put(scratch.path() / "elsewhere" / "b" / "csrc" / "kernel.cu", "__global__ void k() {} \n");
  EXPECT_NE(hex(*a), hex(tree_sha256(files, scratch.path() / "elsewhere" / "b").value()));
  put(scratch.path() / "a" / "csrc" / "new.cu", "");
  EXPECT_NE(hex(*a), hex(tree_sha256(files, scratch.path() / "a").value())) << "a file added changes it";
}

TEST(TreeDigest, ADirectoryThatIsNotThereIsAFailure) {
  const test::ScratchDir scratch("fabuild-tree");
  EXPECT_FALSE(tree_sha256(RealFiles{}, scratch.path() / "missing"));
}

}  // namespace
}  // namespace fabuild
