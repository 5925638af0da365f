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

TEST_F(FileTest, AppendsTruncatesAndKnowsItsSize) {
  const fs::path path = dir_.path() / "x.part";
  {
    File f(path, File::Mode::kAppend);
    f.write("hello ");
    f.sync();
  }
  File f(path, File::Mode::kAppend);
  EXPECT_EQ(f.size(), 6U);
  f.write("world");
  EXPECT_EQ(f.size(), 11U);
  f.close();
  EXPECT_EQ(test::ScratchDir::read(path), "hello world");
  File g(path, File::Mode::kAppend);
  g.truncate();
  g.write("again");
  g.close();
  EXPECT_EQ(test::ScratchDir::read(path), "again");
}

TEST_F(FileTest, CreateNewRefusesANameThatExists) {
  const fs::path path = dir_.path() / "taken";
  File(path, File::Mode::kCreateNew).close();
  EXPECT_THROW(File(path, File::Mode::kCreateNew), std::runtime_error);
}

TEST_F(FileTest, AnErrorNamesTheFile) {
  try {
    File(dir_.path() / "missing" / "dir" / "f", File::Mode::kAppend);
    FAIL() << "opened a file in a missing directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f"), std::string::npos) << e.what();
  }
}

TEST_F(FileTest, ALockIsExclusiveAndItsFileStaysReadable) {
  const fs::path path = dir_.path() / "lock";
  File holder(path, File::Mode::kReadWrite);
  ASSERT_TRUE(holder.try_lock());
  holder.truncate();
  holder.write("held by me\n");
  File other(path, File::Mode::kReadWrite);
  EXPECT_FALSE(other.try_lock());
  EXPECT_EQ(test::ScratchDir::read(path), "held by me\n");  // Windows' locks are mandatory: not here
  holder.close();
  EXPECT_TRUE(other.try_lock());
}

TEST_F(FileTest, ReplaceFileSwapsTheOldFileForTheNewInOneStep) {
  const fs::path target = dir_.path() / "SHA256SUMS";
  std::ofstream(target) << "old\n";
  fs::path temp;
  File t = create_temp_beside(target, temp);
  EXPECT_TRUE(std::regex_match(temp.filename().string(), std::regex(R"(^\.SHA256SUMS\.tmp\.[A-Za-z0-9]{6}$)"))) << temp;
  t.write("new\n");
  t.close();
  replace_file(temp, target);
  EXPECT_EQ(test::ScratchDir::read(target), "new\n");
  EXPECT_FALSE(fs::exists(temp));
}

// A whole file appears in one step, its temporary file beside it or in the directory named,
// and a write that cannot be done leaves nothing behind.
TEST_F(FileTest, AWholeFileReplacesTheOldOneAndLeavesNoTemporaryFile) {
  const fs::path path = dir_.path() / "manifest.json";
  write_whole_file(path, "old");
  write_whole_file(path, "new", {}, true);
  EXPECT_EQ(test::ScratchDir::read(path), "new");
  fs::create_directories(dir_.path() / "tmp");
  write_whole_file(path, "newer", dir_.path() / "tmp");
  EXPECT_EQ(test::ScratchDir::read(path), "newer");
  EXPECT_THROW(write_whole_file(dir_.path() / "no-such-dir" / "x", "y", dir_.path() / "tmp"), std::runtime_error);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(dir_.path())) ++entries;
  EXPECT_EQ(entries, 2u) << "only manifest.json and tmp/";
}

TEST_F(FileTest, ATemporaryDirectoryIsNewEachTime) {
  const fs::path a = make_temp_directory("fabuild-file-test-");
  const fs::path b = make_temp_directory("fabuild-file-test-");
  EXPECT_NE(a, b);
  EXPECT_TRUE(fs::is_directory(a));
  EXPECT_TRUE(fs::is_empty(b));
  fs::remove(a);
  fs::remove(b);
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
