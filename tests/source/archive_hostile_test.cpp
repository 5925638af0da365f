// Archives crafted to escape the tree in ways archive_test.cpp does not build: a pax hard link
// that carries data, aimed through a chain of symlinks that each look harmless, at a file
// outside (libarchive would write the data into it); loops; setuid bits; a zip bomb; a name
// longer than the kernel takes. Python's tarfile writes the tar that libarchive's writer will
// not (a hard link with a body).

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../support/archive_builder.h"
#include "../support/scratch_dir.h"
#include "served_file.h"
#include "source/archive.h"
#include "util/error.h"

extern char** environ;

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::ArchiveEntry;
using test::ArchiveFormat;
using E = ArchiveEntry;

// Runs python3 with `script` and `arg` as argv (no shell); true when it exits 0.
bool run_python(const std::string& script, const std::string& arg) {
  std::vector<std::string> args = {"python3", "-c", script, arg};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawnp(&pid, "python3", nullptr, nullptr, argv.data(), environ) != 0) return false;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class HostileArchive : public ::testing::Test {
 protected:
  fs::path work() const { return scratch_.path() / "work"; }
  fs::path dest() const { return work() / "src"; }

  std::string refusal(const fs::path& archive, ExtractLimits limits = {}) {
    const Expected<void> done = extract_archive(archive, dest(), limits);
    if (!done) {
      EXPECT_NE(done.error().hint.find("do not build from it"), std::string::npos) << done.error().hint;
      return done.error().message();
    }
    ADD_FAILURE() << archive << " was extracted";
    return {};
  }

  void expect_nothing_left() {
    EXPECT_FALSE(fs::exists(fs::symlink_status(dest())));
    for (const auto& e : fs::directory_iterator(work())) {
      EXPECT_EQ(e.path().filename(), "sentinel") << "left behind: " << e.path();
    }
  }

  void SetUp() override {
    fs::create_directories(work());
    test::write_file(work() / "sentinel", "ORIGINAL\n");
  }

  test::ScratchDir scratch_{"fabuild-hostile-archive"};
};

// "a/up -> .." is the root; "b/l -> ../a/up/.." looks like "a" by name but resolves to the
// root's parent, where `sentinel` lives. "p/x" is a hard link to "b/l/sentinel" with a body.
TEST_F(HostileArchive, HardLinkWithDataThroughASymlinkChainNeverWritesOutside) {
  const fs::path archive = scratch_.path() / "evil.tar";
  ASSERT_TRUE(run_python(R"(
import io, sys, tarfile
def add(t, name, kind, link="", data=b"", pax=None):
    i = tarfile.TarInfo(name); i.type = kind; i.linkname = link; i.size = len(data); i.mode = 0o644
    if pax: i.pax_headers = pax
    t.addfile(i, io.BytesIO(data) if data else None)
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    add(t, "a", tarfile.DIRTYPE); add(t, "a/up", tarfile.SYMTYPE, "..")
    add(t, "b", tarfile.DIRTYPE); add(t, "b/l", tarfile.SYMTYPE, "../a/up/..")
    add(t, "p", tarfile.DIRTYPE)
    add(t, "p/x", tarfile.LNKTYPE, "b/l/sentinel", b"PWNED\n", {"size": "6"})
)",
                         archive.string()));
  const std::string why = refusal(archive);
  EXPECT_NE(why.find("cannot extract 'p/x'"), std::string::npos) << why;
  EXPECT_EQ(test::slurp_file(work() / "sentinel"), "ORIGINAL\n") << "the archive wrote outside its tree";
  expect_nothing_left();
}

TEST_F(HostileArchive, SymlinkLoopIsRefused) {
  const fs::path archive = scratch_.path() / "loop.tar.gz";
  test::write_archive(archive, ArchiveFormat::kTarGz,
                      {E::dir("p/"), E::symlink("p/a", "b"), E::symlink("p/b", "a"), E::file("p/ok", "x")});
  const std::string why = refusal(archive);
  EXPECT_NE(why.find("is part of a loop"), std::string::npos) << why;
  expect_nothing_left();
}

TEST_F(HostileArchive, SetuidAndSetgidBitsAreNotExtracted) {
  const fs::path archive = scratch_.path() / "suid.tar";
  ASSERT_TRUE(run_python(R"(
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    i = tarfile.TarInfo("p/tool"); i.size = 3; i.mode = 0o6755
    t.addfile(i, io.BytesIO(b"#!x"))
)",
                         archive.string()));
  ASSERT_TRUE(extract_archive(archive, dest()));
  const auto perms = fs::status(dest() / "p/tool").permissions();
  EXPECT_EQ(perms & (fs::perms::set_uid | fs::perms::set_gid), fs::perms::none);
}

TEST_F(HostileArchive, ZipBombIsRefused) {
  const fs::path archive = scratch_.path() / "bomb.zip";
  ArchiveEntry bomb = E::file("p/zeros", "");
  bomb.zeros = 64 << 20;
  test::write_archive(archive, ArchiveFormat::kZip, {bomb});
  ASSERT_LT(fs::file_size(archive), 1u << 20) << "not a bomb";
  ExtractLimits limits;
  limits.max_total_bytes = 4 << 20;
  const std::string why = refusal(archive, limits);
  EXPECT_NE(why.find("expands past the limit of 4194304 bytes"), std::string::npos) << why;
  expect_nothing_left();
}

TEST_F(HostileArchive, NameLongerThanTheKernelTakesIsRefusedCleanly) {
  const std::string name = "p/" + std::string(300, 'd') + "/f";  // NAME_MAX is 255
  const fs::path archive = scratch_.path() / "long.tar";
  test::write_archive(archive, ArchiveFormat::kTar, {E::file("p/ok", "x"), E::file(name, "x")});
  const std::string why = refusal(archive);
  EXPECT_NE(why.find("cannot extract 'p/ddd"), std::string::npos) << why;
  expect_nothing_left();
}

}  // namespace
}  // namespace fabuild
