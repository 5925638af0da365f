#include "util/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#ifndef _WIN32
#include <sys/stat.h>
#endif
#include <type_traits>

#include "../support/fake_files.h"
#include "../support/scratch_dir.h"

// The filesystem as app reaches it (util/files.h): one contract, held by this machine's files
// and by the in-memory fake that app's tests use in their place, so that what the fake tells a
// test is what the disk would.
namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <class T>
class FilesContract : public ::testing::Test {
 protected:
  FilesContract() {
    if constexpr (std::is_same_v<T, test::FakeFiles>) files_.add_directory(dir_.path());
  }
  [[nodiscard]] fs::path at(const std::string& name) const { return dir_.path() / name; }

  test::ScratchDir dir_{"fabuild-files"};
  T files_;
};

using Implementations = ::testing::Types<RealFiles, test::FakeFiles>;
TYPED_TEST_SUITE(FilesContract, Implementations);

TYPED_TEST(FilesContract, TellsAFileFromADirectoryAndFromNothing) {
  Files& files = this->files_;
  ASSERT_TRUE(files.write(this->at("a"), "bytes"));
  ASSERT_TRUE(files.create_directories(this->at("d/e")));
  EXPECT_EQ(files.kind(this->at("a")), Files::Kind::kFile);
  EXPECT_EQ(files.kind(this->at("d/e")), Files::Kind::kDirectory);
  EXPECT_EQ(files.kind(this->at("d")), Files::Kind::kDirectory);
  EXPECT_EQ(files.kind(this->at("missing")), Files::Kind::kNone);
  EXPECT_TRUE(files.is_file(this->at("a")));
  EXPECT_FALSE(files.is_directory(this->at("a")));
  EXPECT_FALSE(files.exists(this->at("d/missing")));
}

TYPED_TEST(FilesContract, HashesAFileAsItsBytesAndFailsForNone) {
  Files& files = this->files_;
  const std::string bytes(200000, 'x');  // longer than the real files' read buffer
  ASSERT_TRUE(files.write(this->at("big"), bytes));
  const Expected<Sha256> sum = files.sha256(this->at("big"));
  ASSERT_TRUE(sum) << sum.error().what;
  EXPECT_EQ(hex(*sum), hex(sha256_of(bytes)));
  EXPECT_FALSE(files.sha256(this->at("missing")));
}

TYPED_TEST(FilesContract, WritesAWholeFileOverTheOldOneAndReadsItBack) {
  Files& files = this->files_;
  ASSERT_TRUE(files.write(this->at("x"), "one two three"));
  ASSERT_TRUE(files.write(this->at("x"), "four"));
  const Expected<std::string> read = files.read(this->at("x"));
  ASSERT_TRUE(read) << read.error().what;
  EXPECT_EQ(*read, "four");
  EXPECT_THAT(files.list(this->dir_.path()).value(), ElementsAre(this->at("x"))) << "no temporary file left beside it";

  const Expected<std::string> missing = files.read(this->at("missing"));
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().what, HasSubstr(this->at("missing").string()));
  const Expected<void> nowhere = files.write(this->at("no/x"), "bytes");
  ASSERT_FALSE(nowhere);
  EXPECT_THAT(nowhere.error().what, HasSubstr(this->at("no").string()));
}

// A reader following a file another process appends to: what was added since its last look.
TYPED_TEST(FilesContract, ReadsAFileFromAnOffsetToItsEnd) {
  Files& files = this->files_;
  ASSERT_TRUE(files.append(this->at("tally"), "line 1\n"));
  EXPECT_EQ(files.read_from(this->at("tally"), 0).value(), "line 1\n");
  ASSERT_TRUE(files.append(this->at("tally"), "line 2\npart"));
  EXPECT_EQ(files.read_from(this->at("tally"), 7).value(), "line 2\npart");
  EXPECT_EQ(files.read_from(this->at("tally"), 18).value(), "") << "at the end";
  EXPECT_EQ(files.read_from(this->at("tally"), 100).value(), "") << "past the end";
  EXPECT_FALSE(files.read_from(this->at("missing"), 0));
}

TYPED_TEST(FilesContract, AppendsAtTheEndOfAFileItMakesIfMissing) {
  Files& files = this->files_;
  ASSERT_TRUE(files.append(this->at("log"), "first\n"));
  ASSERT_TRUE(files.append(this->at("log"), "second\n"));
  EXPECT_EQ(files.read(this->at("log")).value(), "first\nsecond\n");
  EXPECT_FALSE(files.append(this->at("no/log"), "x"));
}

TYPED_TEST(FilesContract, ListsADirectorysEntriesInOrderOfName) {
  Files& files = this->files_;
  ASSERT_TRUE(files.write(this->at("b.whl"), ""));
  ASSERT_TRUE(files.write(this->at("a.whl"), ""));
  ASSERT_TRUE(files.create_directories(this->at("c/deeper")));
  EXPECT_THAT(files.list(this->dir_.path()).value(), ElementsAre(this->at("a.whl"), this->at("b.whl"), this->at("c")));
  const auto missing = files.list(this->at("missing"));
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().what, HasSubstr(this->at("missing").string()));
  EXPECT_FALSE(files.list(this->at("a.whl"))) << "a file is no directory";
}

TYPED_TEST(FilesContract, FindsTheFilesBelowADirectoryButNotInThoseItSkips) {
  Files& files = this->files_;
  ASSERT_TRUE(files.create_directories(this->at("w/logs")));
  ASSERT_TRUE(files.create_directories(this->at("w/fa/cu130")));
  ASSERT_TRUE(files.write(this->at("w/logs/cell.log"), ""));
  ASSERT_TRUE(files.write(this->at("w/fa/cu130/a.whl"), ""));
  ASSERT_TRUE(files.write(this->at("w/SHA256SUMS"), ""));
  EXPECT_THAT(files.files_under(this->at("w"), {}).value(),
              ElementsAre(this->at("w/SHA256SUMS"), this->at("w/fa/cu130/a.whl"), this->at("w/logs/cell.log")));
  const auto logs = [](const fs::path& dir) { return dir.filename() == "logs"; };
  EXPECT_THAT(files.files_under(this->at("w"), logs).value(),
              ElementsAre(this->at("w/SHA256SUMS"), this->at("w/fa/cu130/a.whl")));
  EXPECT_FALSE(files.files_under(this->at("missing"), {}));
}

TYPED_TEST(FilesContract, MakesDirectoriesWithTheirParentsAndKeepsOnesThatAreThere) {
  Files& files = this->files_;
  ASSERT_TRUE(files.create_directories(this->at("x/y/z")));
  ASSERT_TRUE(files.write(this->at("x/y/z/f"), "kept"));
  ASSERT_TRUE(files.create_directories(this->at("x/y/z")));
  EXPECT_EQ(files.read(this->at("x/y/z/f")).value(), "kept");
  const Expected<void> under_a_file = files.create_directories(this->at("x/y/z/f/g"));
  ASSERT_FALSE(under_a_file);
  EXPECT_THAT(under_a_file.error().what, HasSubstr(this->at("x/y/z/f").string()));
}

TYPED_TEST(FilesContract, RenamesFilesOverOthersAndDirectoriesWithWhatTheyHold) {
  Files& files = this->files_;
  ASSERT_TRUE(files.write(this->at("built.whl"), "wheel"));
  ASSERT_TRUE(files.write(this->at("named.whl"), "old"));
  ASSERT_TRUE(files.rename(this->at("built.whl"), this->at("named.whl")));
  EXPECT_FALSE(files.exists(this->at("built.whl")));
  EXPECT_EQ(files.read(this->at("named.whl")).value(), "wheel");

  ASSERT_TRUE(files.create_directories(this->at("tree/sub")));
  ASSERT_TRUE(files.write(this->at("tree/sub/f"), "x"));
  ASSERT_TRUE(files.rename(this->at("tree"), this->at("moved")));
  EXPECT_FALSE(files.exists(this->at("tree")));
  EXPECT_EQ(files.read(this->at("moved/sub/f")).value(), "x");

  const Expected<void> missing = files.rename(this->at("missing"), this->at("other"));
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().what, HasSubstr(this->at("missing").string()));
  EXPECT_THAT(missing.error().what, HasSubstr(this->at("other").string()));
}

TYPED_TEST(FilesContract, CopiesATreeToANewName) {
  Files& files = this->files_;
  ASSERT_TRUE(files.create_directories(this->at("src/csrc")));
  ASSERT_TRUE(files.write(this->at("src/setup.py"), "setup"));
  ASSERT_TRUE(files.write(this->at("src/csrc/a.cu"), "kernel"));
  ASSERT_TRUE(files.create_directories(this->at("stage")));
  ASSERT_TRUE(files.copy(this->at("src"), this->at("stage/src")));
  EXPECT_EQ(files.read(this->at("stage/src/setup.py")).value(), "setup");
  EXPECT_EQ(files.read(this->at("stage/src/csrc/a.cu")).value(), "kernel");
  EXPECT_EQ(files.read(this->at("src/csrc/a.cu")).value(), "kernel") << "the source stays";
  const Expected<void> again = files.copy(this->at("src/setup.py"), this->at("stage/src/setup.py"));
  ASSERT_FALSE(again) << "a file that is there is not replaced";
  EXPECT_THAT(again.error().what, HasSubstr(this->at("stage/src/setup.py").string()));
  EXPECT_FALSE(files.copy(this->at("missing"), this->at("stage/other")));
}

TYPED_TEST(FilesContract, RemovesFilesEmptyDirectoriesAndWholeTrees) {
  Files& files = this->files_;
  EXPECT_EQ(files.remove(this->at("missing")).value(), false);
  ASSERT_TRUE(files.create_directories(this->at("t/u")));
  ASSERT_TRUE(files.write(this->at("t/u/f"), "x"));
  ASSERT_TRUE(files.write(this->at("t/g"), "y"));
  const Expected<bool> full = files.remove(this->at("t"));
  ASSERT_FALSE(full) << "a directory that holds something stays";
  EXPECT_THAT(full.error().what, HasSubstr(this->at("t").string()));
  EXPECT_EQ(files.remove(this->at("t/g")).value(), true);
  EXPECT_EQ(files.remove_all(this->at("t")).value(), 3u) << "t, t/u and t/u/f";
  EXPECT_FALSE(files.exists(this->at("t")));
  EXPECT_EQ(files.remove_all(this->at("t")).value(), 0u);
}

TYPED_TEST(FilesContract, AFileRewrittenIsAnotherFileAndOnlyWhatIsThereIsMarkedUsed) {
  Files& files = this->files_;
  ASSERT_TRUE(files.write(this->at("w"), "first"));
  const auto before = files.identity(this->at("w"));
  ASSERT_TRUE(before);
  EXPECT_EQ(before->size, 5);
  ASSERT_TRUE(files.write(this->at("w"), "again"));
  const auto after = files.identity(this->at("w"));
  ASSERT_TRUE(after);
  EXPECT_NE(after->inode, before->inode) << "a new file renamed over the name";
  EXPECT_FALSE(files.identity(this->dir_.path())) << "a directory has none";
  EXPECT_FALSE(files.identity(this->at("missing")));
  EXPECT_TRUE(files.touch(this->at("w")));
  EXPECT_TRUE(files.touch(this->dir_.path()));
  const Expected<void> missing = files.touch(this->at("missing"));
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().what, HasSubstr(this->at("missing").string()));
}

// The compiler wrapper's install: a file made executable, and a second name for it as a link.
TYPED_TEST(FilesContract, LinksAFileMakesItExecutableAndResolvesItsPath) {
  Files& files = this->files_;
  ASSERT_TRUE(files.write(this->at("t"), "program"));
  ASSERT_TRUE(files.make_executable(this->at("t")));
  EXPECT_FALSE(files.make_executable(this->at("missing")));
#ifndef _WIN32  // a symbolic link needs a privilege there, and only the POSIX wrapper's install makes one
  ASSERT_TRUE(files.link("t", this->at("l")));
  ASSERT_TRUE(files.link("t", this->at("l"))) << "a link made again replaces the one there";
  EXPECT_TRUE(files.is_link(this->at("l")));
  EXPECT_TRUE(files.is_file(this->at("l")));
  EXPECT_FALSE(files.is_link(this->at("t")));
  EXPECT_FALSE(files.is_link(this->at("missing")));
  EXPECT_THAT(files.list(this->dir_.path()).value(), ElementsAre(this->at("l"), this->at("t")))
      << "no temporary link left beside it";
#endif
  ASSERT_TRUE(files.create_directories(this->at("d")));
  EXPECT_EQ(files.resolve(this->at("d/../t")).value(), files.resolve(this->at("t")).value());
  EXPECT_EQ(files.identity(this->at("t"))->links, 1u);
}

TYPED_TEST(FilesContract, FixesTheModesUnderADirectoryThatIsThere) {
  Files& files = this->files_;
  ASSERT_TRUE(files.create_directories(this->at("tree")));
  ASSERT_TRUE(files.write(this->at("tree/a.py"), "x"));
  EXPECT_TRUE(files.fix_modes(this->at("tree")));
  const Expected<std::size_t> missing = files.fix_modes(this->at("missing"));
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().what, HasSubstr(this->at("missing").string()));
  EXPECT_FALSE(files.fix_modes(this->at("tree/a.py"))) << "a file is no tree";
}

#ifndef _WIN32
// What the modes were made under (a umask of 0002, a checkout's 0600) does not reach the tree's
// modes: only whether anyone may run a file does.
TEST(RealFiles, FixedModesAreTheSameWhateverTheFilesWereMadeWith) {
  test::ScratchDir dir("fabuild-modes");
  const fs::path tree = dir.path() / "tree";
  fs::create_directories(tree / "pkg" / "sub");
  const auto file = [&](const char* name, fs::perms mode) {
    std::ofstream(tree / name) << name;
    fs::permissions(tree / name, mode);
  };
  using P = fs::perms;
  file("pkg/a.py", P::owner_read | P::owner_write | P::group_read | P::group_write | P::others_read);  // 0664
  file("pkg/run.sh", P::owner_all | P::group_all | P::others_read | P::others_exec);                   // 0775
  file("pkg/sub/private", P::owner_read | P::owner_write);                                             // 0600
  file("pkg/sub/tool", P::owner_read | P::owner_exec);                                                 // 0500
  file("ok.txt", P::owner_read | P::owner_write | P::group_read | P::others_read);                     // 0644
  fs::permissions(tree / "pkg", P::owner_all | P::group_all | P::others_read | P::others_exec);        // 0775
  for (const fs::path& d : {tree, tree / "pkg" / "sub"})
    fs::permissions(d, P::owner_all | P::group_read | P::group_exec | P::others_read | P::others_exec);  // 0755
  fs::create_symlink("a.py", tree / "pkg" / "link");
  RealFiles files;
  const Expected<std::size_t> changed = files.fix_modes(tree);
  ASSERT_TRUE(changed) << changed.error().what;
  EXPECT_EQ(*changed, 5u) << "pkg, a.py, run.sh, private, tool; not ok.txt, tree, sub or the link";
  const auto mode = [&](const char* name) { return fs::symlink_status(tree / name).permissions(); };
  const P read = P::owner_read | P::owner_write | P::group_read | P::others_read;
  const P run = read | P::owner_exec | P::group_exec | P::others_exec;
  EXPECT_EQ(mode("pkg/a.py"), read);
  EXPECT_EQ(mode("pkg/run.sh"), run);
  EXPECT_EQ(mode("pkg/sub/private"), read);
  EXPECT_EQ(mode("pkg/sub/tool"), run);
  EXPECT_EQ(mode("ok.txt"), read);
  EXPECT_EQ(mode("pkg"), run);
  EXPECT_EQ(mode("pkg/sub"), run);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(tree / "pkg" / "link")));
  EXPECT_EQ(files.fix_modes(tree).value(), 0u) << "fixed once: nothing left to change";
}

// A FIFO in a source tree: the copy's failure names it, not the library's "Invalid argument".
TEST(RealFiles, ACopyOfATreeWithAFifoNamesTheFifo) {
  test::ScratchDir dir("fabuild-fifo");
  fs::create_directories(dir.path() / "src" / "sub");
  std::ofstream(dir.path() / "src" / "setup.py") << "setup()\n";
  ASSERT_EQ(mkfifo((dir.path() / "src" / "sub" / "pipe").c_str(), 0600), 0);
  const Expected<void> copied = RealFiles{}.copy(dir.path() / "src", dir.path() / "copy");
  ASSERT_FALSE(copied);
  EXPECT_THAT(copied.error().what,
              ::testing::HasSubstr((dir.path() / "src" / "sub" / "pipe").string() + " is a FIFO (named pipe)"));
  EXPECT_THAT(copied.error().hint, ::testing::HasSubstr("remove it from the tree"));
}
#endif

// The fake's own: a chosen operation fails as the real one would, naming the path.
TEST(FakeFiles, FailsAChosenOperationOnAChosenPath) {
  test::FakeFiles files;
  files.add_file("/dist/a.whl", "wheel");
  files.fail_on(test::FileOp::kRename, "/dist/A.whl");
  const Expected<void> renamed = files.rename("/dist/a.whl", "/dist/A.whl");
  ASSERT_FALSE(renamed);
  EXPECT_THAT(renamed.error().what, HasSubstr("cannot rename /dist/a.whl to /dist/A.whl: "));
  EXPECT_EQ(files.file("/dist/a.whl"), "wheel") << "left where it was";
  EXPECT_TRUE(files.rename("/dist/a.whl", "/dist/b.whl")) << "only the chosen one fails";
  EXPECT_THAT(files.paths(), ElementsAre(fs::path("/dist"), fs::path("/dist/b.whl")));
}

}  // namespace
}  // namespace fabuild
