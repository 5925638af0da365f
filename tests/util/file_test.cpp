#include "util/file.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <regex>
#include <thread>

#include "../support/scratch_dir.h"
#include "util/dir_lock.h"

// util's files on this platform's calls (file_posix.cpp or file_win32.cpp).
namespace fabuild {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class FileTest : public ::testing::Test {
 protected:
  test::ScratchDir dir_{"fabuild-file"};
};

// An open file, or the test stops with the Failure that says why not.
File opened(const fs::path& path, File::Mode mode) {
  Expected<File> f = File::open(path, mode);
  EXPECT_TRUE(f.has_value()) << f.error().what;
  return f ? std::move(*f) : File();
}

TEST_F(FileTest, AppendsTruncatesAndKnowsItsSize) {
  const fs::path path = dir_.path() / "x.part";
  {
    File f = opened(path, File::Mode::kAppend);
    ASSERT_TRUE(f.write("hello "));
    ASSERT_TRUE(f.sync());
  }
  File f = opened(path, File::Mode::kAppend);
  EXPECT_EQ(f.size(), 6U);
  ASSERT_TRUE(f.write("world"));
  EXPECT_EQ(f.size(), 11U);
  ASSERT_TRUE(f.close());
  EXPECT_EQ(test::ScratchDir::read(path), "hello world");
  File g = opened(path, File::Mode::kAppend);
  ASSERT_TRUE(g.truncate());
  ASSERT_TRUE(g.write("again"));
  ASSERT_TRUE(g.close());
  EXPECT_EQ(test::ScratchDir::read(path), "again");
}

TEST_F(FileTest, CreateNewRefusesANameThatExists) {
  const fs::path path = dir_.path() / "taken";
  ASSERT_TRUE(opened(path, File::Mode::kCreateNew).close());
  EXPECT_FALSE(File::open(path, File::Mode::kCreateNew).has_value());
}

TEST_F(FileTest, AFailureNamesTheFile) {
  const Expected<File> f = File::open(dir_.path() / "missing" / "dir" / "f", File::Mode::kAppend);
  ASSERT_FALSE(f.has_value()) << "opened a file in a missing directory";
  EXPECT_NE(f.error().what.find("cannot open"), std::string::npos) << f.error().what;
  EXPECT_NE(f.error().what.find("f"), std::string::npos) << f.error().what;
}

TEST_F(FileTest, ALockIsExclusiveAndItsFileStaysReadable) {
  const fs::path path = dir_.path() / "lock";
  File holder = opened(path, File::Mode::kReadWrite);
  EXPECT_TRUE(holder.try_lock().value_or(false));
  ASSERT_TRUE(holder.truncate());
  ASSERT_TRUE(holder.write("held by me\n"));
  File other = opened(path, File::Mode::kReadWrite);
  EXPECT_FALSE(other.try_lock().value_or(true));
  EXPECT_EQ(test::ScratchDir::read(path), "held by me\n");  // Windows' locks are mandatory: not here
  ASSERT_TRUE(holder.close());
  EXPECT_TRUE(other.try_lock().value_or(false));
}

TEST_F(FileTest, ReplaceFileSwapsTheOldFileForTheNewInOneStep) {
  const fs::path target = dir_.path() / "SHA256SUMS";
  std::ofstream(target) << "old\n";
  fs::path temp;
  Expected<File> t = create_temp_beside(target, temp);
  ASSERT_TRUE(t.has_value()) << t.error().what;
  EXPECT_TRUE(std::regex_match(temp.filename().string(), std::regex(R"(^\.SHA256SUMS\.tmp\.[A-Za-z0-9]{6}$)"))) << temp;
  ASSERT_TRUE(t->write("new\n"));
  ASSERT_TRUE(t->close());
  ASSERT_TRUE(replace_file(temp, target));
  EXPECT_EQ(test::ScratchDir::read(target), "new\n");
  EXPECT_FALSE(fs::exists(temp));
}

// A whole file appears in one step, its temporary file beside it or in the directory named,
// and a write that cannot be done leaves nothing behind.
TEST_F(FileTest, AWholeFileReplacesTheOldOneAndLeavesNoTemporaryFile) {
  const fs::path path = dir_.path() / "manifest.json";
  ASSERT_TRUE(write_whole_file(path, "old"));
  ASSERT_TRUE(write_whole_file(path, "new", {}, true));
  EXPECT_EQ(test::ScratchDir::read(path), "new");
  fs::create_directories(dir_.path() / "tmp");
  ASSERT_TRUE(write_whole_file(path, "newer", dir_.path() / "tmp"));
  EXPECT_EQ(test::ScratchDir::read(path), "newer");
  const Expected<void> refused = write_whole_file(dir_.path() / "no-such-dir" / "x", "y", dir_.path() / "tmp");
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().what.find("no-such-dir"), std::string::npos) << refused.error().what;
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(dir_.path())) ++entries;
  EXPECT_EQ(entries, 2u) << "only manifest.json and tmp/";
}

TEST_F(FileTest, ATemporaryDirectoryIsNewEachTime) {
  const Expected<fs::path> a = make_temp_directory("fabuild-file-test-");
  const Expected<fs::path> b = make_temp_directory("fabuild-file-test-");
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(fs::is_directory(*a));
  EXPECT_TRUE(fs::is_empty(*b));
  fs::remove(*a);
  fs::remove(*b);
}

TEST_F(FileTest, IdentityChangesWithTheFileNotWithItsName) {
  const fs::path path = dir_.path() / "w.whl";
  std::ofstream(path) << "one";
  const auto first = identity_of(path);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->size, 3);
  EXPECT_EQ(identity_of(path)->inode, first->inode);
  std::ofstream(dir_.path() / "w2") << "two!";
  fs::rename(dir_.path() / "w2", path);
  const auto second = identity_of(path);
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second->inode, first->inode);
  EXPECT_FALSE(identity_of(dir_.path()).has_value());  // a directory is not a file
}

// Two threads stand for two processes: each lock is its own (an open file description, or a
// mutex owned by a thread), so the second waits for the first.
TEST_F(FileTest, ADirectoryLockMakesTheSecondHolderWait) {
  std::atomic<bool> first_holds{false};
  std::atomic<bool> second_got_it{false};
  std::thread first([&] {
    const DirectoryLock lock(dir_.path());
    first_holds = true;
    std::this_thread::sleep_for(300ms);
    EXPECT_FALSE(second_got_it);
  });
  while (!first_holds) std::this_thread::sleep_for(1ms);
  {
    const DirectoryLock lock(dir_.path());
    second_got_it = true;
  }
  first.join();
  EXPECT_TRUE(second_got_it);
}

}  // namespace
}  // namespace fabuild
