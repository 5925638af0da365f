#include "publish/simple_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(SimpleIndex, ProjectPageLinksEachWheelRelativelyWithItsHashesAndMetadata) {
  CatalogWheel w;
  w.path = "fa2.8.3/torch2.8/cu128/flash_attn-2.8.3+cu128torch2.8cxx11abitrue-cp312-cp312-linux_x86_64.whl";
  w.project = "flash-attn";
  w.sha256 = std::string(64, 'a');
  w.metadata_sha256 = std::string(64, 'b');
  w.requires_python = ">=3.9,<4";
  const std::string page = project_page("flash-attn", "", {&w});
  EXPECT_THAT(page,
              HasSubstr("<a href=\"../../fa2.8.3/torch2.8/cu128/flash_attn-2.8.3%2Bcu128torch2.8cxx11abitrue-cp312-"
                        "cp312-linux_x86_64.whl#sha256=" +
                        std::string(64, 'a') + "\""));
  EXPECT_THAT(page, HasSubstr("data-requires-python=\"&gt;=3.9,&lt;4\""));
  EXPECT_THAT(page, HasSubstr("data-dist-info-metadata=\"sha256=" + std::string(64, 'b') + "\""));
  EXPECT_THAT(page, HasSubstr("data-core-metadata=\"sha256=" + std::string(64, 'b') + "\""));
  EXPECT_THAT(page, HasSubstr(">flash_attn-2.8.3+cu128torch2.8cxx11abitrue-cp312-cp312-linux_x86_64.whl</a>"));
  EXPECT_THAT(page, HasSubstr("<meta name=\"pypi:repository-version\" content=\"1.0\">"));
  // A variant's pages are two directories deeper.
  EXPECT_THAT(project_page("flash-attn", "cu128/torch2.8", {&w}), HasSubstr("href=\"../../../../fa2.8.3/"));
  w.requires_python.clear();
  EXPECT_THAT(project_page("flash-attn", "", {&w}), Not(HasSubstr("data-requires-python")));
}

TEST(SimpleIndex, OneMainIndexAndOnePerVariantEachWithItsOwnWheels) {
  ScratchDir dir("fabuild-simple");
  const fs::path house = dir.path();
  test::file_test_wheel(house, "cp312");
  test::file_test_wheel(house, "cp311", "fa2.8.3/torch2.7/cu126");
  test::file_test_wheel(house, "cp310", "loose");
  const std::vector<IndexTree> trees = write_simple_indexes(house, catalog_wheelhouse(house));
  ASSERT_EQ(trees.size(), 3u);
  EXPECT_EQ(trees[0].root, "");
  EXPECT_EQ(trees[1].root, "cu126/torch2.7");
  EXPECT_EQ(trees[2].root, "cu128/torch2.8");
  EXPECT_EQ(trees[0].projects, std::vector<std::string>{"flash-attn"});

  const std::string main = ScratchDir::read(house / "simple/flash-attn/index.html");
  for (const char* tag : {"cp310", "cp311", "cp312"})
    EXPECT_THAT(main, HasSubstr(std::string(tag) + "-linux_x86_64.whl#sha256="));
  EXPECT_THAT(ScratchDir::read(house / "simple/index.html"), HasSubstr("<a href=\"flash-attn/\">flash-attn</a>"));
  const std::string cu128 = ScratchDir::read(house / "cu128/torch2.8/simple/flash-attn/index.html");
  EXPECT_THAT(cu128, HasSubstr("cp312-cp312"));
  EXPECT_THAT(cu128, Not(HasSubstr("cp311-cp311")));
  EXPECT_THAT(cu128, Not(HasSubstr("cp310-cp310")));
  EXPECT_TRUE(fs::exists(house / "cu126/torch2.7/simple/index.html"));
}

TEST(SimpleIndex, PagesOfWheelsThatAreGoneAreRemoved) {
  ScratchDir dir("fabuild-simple");
  const fs::path house = dir.path();
  test::file_test_wheel(house, "cp312");
  const std::string old = test::file_test_wheel(house, "cp311", "fa2.8.3/torch2.7/cu126");
  fs::create_directories(house / "simple/someone-elses-project");
  write_simple_indexes(house, catalog_wheelhouse(house));
  ASSERT_TRUE(fs::exists(house / "cu126/torch2.7/simple/flash-attn/index.html"));

  fs::remove(house / old);
  const auto trees = write_simple_indexes(house, catalog_wheelhouse(house));
  EXPECT_EQ(trees.size(), 2u);
  EXPECT_FALSE(fs::exists(house / "cu126")) << "the variant tree of the removed wheel";
  EXPECT_FALSE(fs::exists(house / "simple/someone-elses-project"));
  EXPECT_THAT(ScratchDir::read(house / "simple/flash-attn/index.html"), Not(HasSubstr("cp311")));
  EXPECT_TRUE(fs::exists(house / "fa2.8.3/torch2.7/cu126")) << "wheel directories are not the index's to remove";
}

TEST(SimpleIndex, AnEmptyWheelhouseStillHasAMainIndex) {
  ScratchDir dir("fabuild-simple");
  write_simple_indexes(dir.path(), catalog_wheelhouse(dir.path()));
  EXPECT_THAT(ScratchDir::read(dir.path() / "simple/index.html"), HasSubstr("<body>\n</body>"));
}

}  // namespace
}  // namespace fabuild
