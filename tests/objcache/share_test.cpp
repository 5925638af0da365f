// A compile share's split as fabuild writes it and fabuild-cc reads it (objcache/share.h), and
// fabuild-cc in a share job for real: its own units compiled and stored, the others' stood in
// for by marked placeholder objects that no cache keeps.

#include "objcache/share.h"

#include <gtest/gtest.h>

#include "support.h"

namespace fabuild::objcache {
namespace {

namespace fs = std::filesystem;
using test::Ran;
using test::run;
using test::tally_lines;
using test::write;

TEST(ShareFile, ReadsBackWhatIsWritten) {
  ShareSplit split;
  split.index = 3;
  split.count = 4;
  split.unit_share = {{"/s/src/a.cu", 1}, {"/s/src/b c.cu", 3}};
  const auto back = parse_share_file(write_share_file(split));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->index, 3);
  EXPECT_EQ(back->count, 4);
  EXPECT_EQ(back->unit_share, split.unit_share);
  EXPECT_TRUE(back->mine("/s/src/b c.cu"));
  EXPECT_FALSE(back->mine("/s/src/a.cu"));
}

TEST(ShareFile, RefusesWhatIsNotOne) {
  EXPECT_FALSE(parse_share_file(""));
  EXPECT_FALSE(parse_share_file("share 1/2\n"));
  EXPECT_FALSE(parse_share_file("fabuild compile share 1\nshare 3/2\n"));
  EXPECT_FALSE(parse_share_file("fabuild compile share 1\nshare 1/2\n3\t/a.cu\n"));
  EXPECT_FALSE(parse_share_file("fabuild compile share 1\nshare 1/2\nx\t/a.cu\n"));
  EXPECT_TRUE(parse_share_file("fabuild compile share 1\nshare 1/2\n2\t/a.cu\n"));
}

// A unit the split does not list (the API file) is no share's: the finishing job compiles it.
TEST(ShareFile, AnUnlistedUnitIsLeftToTheFinishingJob) {
  ShareSplit split;
  split.count = 4;
  split.unit_share = {{"/s/src/k.cu", 1}};
  EXPECT_EQ(split.share_of("/s/src/api.cpp"), 0);
  for (int k = 1; k <= 4; ++k) {
    split.index = k;
    EXPECT_FALSE(split.mine("/s/src/api.cpp"));
  }
}

TEST(ShareWrapper, CompilesItsUnitsAndStandsInForTheOthers) {
  fabuild::test::ScratchDir scratch("objcache-share");
  const fs::path src = scratch.path() / "src";
  const fs::path cache = scratch.path() / "cache";
  const fs::path tally = scratch.path() / "tally";
  write(src / "mine.cpp", "int mine() { return 1; }\n");
  write(src / "theirs.cpp", "int theirs() { return 2; }\n");
  ShareSplit split;
  split.index = 1;
  split.count = 2;
  split.unit_share = {{(src / "mine.cpp").string(), 1}, {(src / "theirs.cpp").string(), 2}};
  write(scratch.path() / "share", write_share_file(split));
  const std::vector<std::string> env = {"FABUILD_CC_DIR=" + cache.string(), "FABUILD_CC_TALLY=" + tally.string(),
                                        "FABUILD_CC_SHARE=" + (scratch.path() / "share").string()};
  const auto compile = [&](const std::string& name) {
    return run({FABUILD_CC_BINARY, "g++", "-MMD", "-MF", name + ".o.d", "-O2", "-c", (src / (name + ".cpp")).string(),
                "-o", name + ".o"},
               env, scratch.path(), scratch.path());
  };
  const Ran mine = compile("mine");
  ASSERT_EQ(mine.code, 0) << mine.err;
  const Ran theirs = compile("theirs");
  ASSERT_EQ(theirs.code, 0) << theirs.err;

  const auto lines = tally_lines(tally);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0][0], "miss");
  EXPECT_EQ(lines[1][0], "placeholder");
  EXPECT_EQ(lines[1][3], "compiled by share 2/2");
  // The real compile's costs are in its line: wall ms, CPU ms, peak kB; then the memory gate's
  // wait, -1 with no gate; how busy the machine was, in percent.
  ASSERT_EQ(lines[0].size(), 11U);
  EXPECT_GT(std::stoull(lines[0][8]), 0U);
  EXPECT_EQ(lines[0][9], "-1");
  EXPECT_LE(std::stoi(lines[0][10]), 100);
  EXPECT_GE(std::stoi(lines[0][10]), 0);
  // The placeholder is a real object (the link goes on), marked, without the unit's symbol.
  const std::string placeholder = fabuild::test::ScratchDir::read(scratch.path() / "theirs.o");
  EXPECT_EQ(placeholder.rfind("\x7f"
                              "ELF",
                              0),
            0U);
  EXPECT_NE(placeholder.find(kPlaceholderMark), std::string::npos);
  EXPECT_EQ(placeholder.find("theirs"), std::string::npos);
  EXPECT_NE(fabuild::test::ScratchDir::read(scratch.path() / "theirs.o.d").find("theirs.o:"), std::string::npos);
  // Nothing of it is stored: one result in the cache, the real one.
  std::size_t results = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache / "results")) results += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(results, 1U);

  // Another share's unit that the cache holds is taken from it (a share run again after the
  // remote brought it), not stood in for.
  write(scratch.path() / "share", write_share_file(ShareSplit{2, 2, split.unit_share}));
  const Ran again = compile("mine");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(tally_lines(tally).back()[0], "hit");
}

TEST(ShareWrapper, AShareFileItCannotReadStopsTheCompileSayingSo) {
  fabuild::test::ScratchDir scratch("objcache-share-bad");
  write(scratch.path() / "k.cpp", "int k() { return 1; }\n");
  const Ran r = run({FABUILD_CC_BINARY, "g++", "-c", (scratch.path() / "k.cpp").string(), "-o", "k.o"},
                    {"FABUILD_CC_DIR=" + (scratch.path() / "cache").string(),
                     "FABUILD_CC_SHARE=" + (scratch.path() / "absent").string()},
                    scratch.path(), scratch.path());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("is not a compile share file"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fabuild::objcache
