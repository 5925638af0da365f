#include "wheel/dist_info.h"

#include <gtest/gtest.h>

namespace fabuild {
namespace {

TEST(Headers, StopAtTheBlankLineBeforeTheDescription) {
  // A README that contains "Version: 9.9" must not be read as METADATA.
  const Headers h = parse_headers(
      "Metadata-Version: 2.1\r\nName: flash_attn\nVersion: 2.8.3\nSummary: fast\n"
      "  and exact\n\nVersion: 9.9\nName: other\n");
  EXPECT_EQ(h.first("name"), "flash_attn");
  EXPECT_EQ(h.all("Version"), std::vector<std::string>{"2.8.3"});
  EXPECT_EQ(h.first("Summary"), "fast\nand exact");
  EXPECT_TRUE(h.problems.empty());
}

TEST(Headers, KeepsEveryTagLineAndReportsGarbage) {
  const Headers h =
      parse_headers("Tag: cp312-cp312-linux_x86_64\nnot a header\nTag: cp312-cp312-manylinux_2_28_x86_64\n");
  EXPECT_EQ(h.all("tag").size(), 2u);
  ASSERT_EQ(h.problems.size(), 1u);
  EXPECT_NE(h.problems[0].find("line 2"), std::string::npos);
}

TEST(Record, ReadsQuotedPathsHashesAndSizes) {
  const Record r =
      parse_record("flash_attn/__init__.py,sha256=abc,12\n\"a,b.py\",sha256=def,3\nx.dist-info/RECORD,,\n");
  ASSERT_EQ(r.entries.size(), 3u);
  EXPECT_EQ(r.entries[1].path, "a,b.py");
  EXPECT_EQ(r.entries[1].size, 3u);
  EXPECT_EQ(r.entries[2].hash, "");
  EXPECT_FALSE(r.entries[2].size.has_value());
  EXPECT_TRUE(r.problems.empty());
}

TEST(Record, ReportsRowsItCannotRead) {
  const Record r = parse_record("a.py,sha256=abc\nb.py,sha256=abc,twelve\n\"c.py,sha256=abc,1\n");
  EXPECT_TRUE(r.entries.empty());
  ASSERT_EQ(r.problems.size(), 3u);
  EXPECT_NE(r.problems[0].find("line 1"), std::string::npos);
  EXPECT_NE(r.problems[1].find("twelve"), std::string::npos);
  EXPECT_NE(r.problems[2].find("not closed"), std::string::npos);
}

TEST(Tags, CompressedTagSetsExpand) {
  EXPECT_EQ(expand_tags({"py2.py3-none-any"}), (std::vector<std::string>{"py2-none-any", "py3-none-any"}));
}

}  // namespace
}  // namespace fabuild
