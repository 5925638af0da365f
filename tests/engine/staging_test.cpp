// A cell's staging directory and what is filed from it, through Files (engine/staging.h).

#include "engine/staging.h"

#include <gtest/gtest.h>

#include <string>

#include "../support/fake_files.h"

namespace fabuild {
namespace {

using test::FakeFiles;
using test::FileOp;

TEST(Staging, AGoodCellsOutputsMoveAndItsOwnNotesStay) {
  FakeFiles files;
  files.add_file("/w/.staging/c/b.whl", "b");
  files.add_file("/w/.staging/c/a.tar.gz", "a");
  files.add_file("/w/.staging/c/.tally", "notes");
  files.add_directory("/w/.staging/c/build");
  const auto filed = file_outputs(files, "/w/.staging/c", "/w/out/c");
  ASSERT_TRUE(filed) << filed.error().what;
  EXPECT_EQ(*filed, (std::vector<std::string>{"a.tar.gz", "b.whl"}));
  EXPECT_EQ(files.file("/w/out/c/b.whl"), "b");
  EXPECT_EQ(files.file("/w/out/c/a.tar.gz"), "a");
  EXPECT_EQ(files.file("/w/.staging/c/.tally"), "notes");
  EXPECT_FALSE(files.exists("/w/out/c/build"));
  discard_staging(files, "/w/.staging/c");
  EXPECT_FALSE(files.exists("/w/.staging/c"));
}

TEST(Staging, AnOutputThatCannotBeMovedIsAFailureNamingIt) {
  FakeFiles files;
  files.add_file("/w/.staging/c/a.whl", "a");
  files.fail_on(FileOp::kRename, "/w/.staging/c/a.whl");
  const auto filed = file_outputs(files, "/w/.staging/c", "/w/out/c");
  ASSERT_FALSE(filed);
  // The path as the system writes it (Windows: with backslashes).
  EXPECT_NE(filed.error().what.find("cannot rename"), std::string::npos) << filed.error().what;
  EXPECT_NE(filed.error().what.find("a.whl"), std::string::npos) << filed.error().what;
  // No staging directory (nothing was made): nothing to file.
  const auto none = file_outputs(files, "/w/.staging/gone", "/w/out/gone");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(Staging, PreparingEmptiesWhatACrashedRunLeftAndSaysWhenItCannotMakeIt) {
  FakeFiles files;
  files.add_file("/w/.staging/c/old.whl", "old");
  ASSERT_TRUE(prepare_staging(files, "/w/.staging/c"));
  EXPECT_TRUE(files.is_directory("/w/.staging/c"));
  EXPECT_FALSE(files.exists("/w/.staging/c/old.whl"));
  files.fail_on(FileOp::kCreateDirectories, "/w/.staging/d");
  EXPECT_FALSE(prepare_staging(files, "/w/.staging/d"));
}

TEST(Staging, ALogsTailIsItsLastLinesFromItsLast64KiB) {
  FakeFiles files;
  files.add_file("/w/logs/c.log", "one\ntwo\nthree\n");
  EXPECT_EQ(log_tail(files, "/w/logs/c.log", 2), (std::vector<std::string>{"two", "three"}));
  EXPECT_TRUE(log_tail(files, "/w/logs/none.log", 2).empty());
  // Longer than 64 KiB: the line cut at the start of what is read is left out.
  std::string big(70 * 1024, 'x');
  big += "\nlast\n";
  files.add_file("/w/logs/big.log", big);
  EXPECT_EQ(log_tail(files, "/w/logs/big.log", 5), (std::vector<std::string>{"last"}));
}

}  // namespace
}  // namespace fabuild
