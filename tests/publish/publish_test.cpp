#include "publish/publish.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.h"
#include "util/error.h"
#include "util/hash.h"
#include "wheel/manifest.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using ::testing::HasSubstr;
using ::testing::Not;

CellRecord ok_cell(const std::string& py, const std::string& wheel) {
  CellRecord c;
  c.id = "fa2.8.3-torch2.8-cu128-" + py + "-linux_x86_64";
  c.status = "ok";
  c.start_s = 0;
  c.duration_s = 10;
  c.wheel = wheel;
  c.dir = "fa2.8.3/torch2.8/cu128";
  c.python = py;
  return c;
}

TEST(Publish, ARunLeavesItsReportSummaryIndexesAndPage) {
  ScratchDir dir("fabuild-publish");
  const fs::path house = dir.path();
  const std::string w312 = test::file_test_wheel(house, "cp312");
  const std::string w311 = test::file_test_wheel(house, "cp311");
  RunRecord run;
  run.started = "2025-11-22T01:00:00Z";
  run.cells = {ok_cell("cp311", w311), ok_cell("cp312", w312)};
  const Published p = publish_wheelhouse(house, run, {});
  EXPECT_EQ(p.catalog.wheels.size(), 2u);
  EXPECT_EQ(p.trees.size(), 2u);
  EXPECT_EQ(p.cells, (std::array<std::size_t, 3>{2, 0, 0}));
  for (const char* f : {"report.json", "summary.md", "index.html", "simple/index.html", "simple/flash-attn/index.html",
                        "cu128/torch2.8/simple/flash-attn/index.html"}) {
    EXPECT_TRUE(fs::exists(house / f)) << f;
  }
  const RunRecord back = read_report(house).value().value();
  EXPECT_EQ(back.cells[1].sha256, p.catalog.wheels[1].sha256) << "the digest of the wheel as published";
  EXPECT_EQ(back.cells[1].size, p.catalog.wheels[1].size);

  // A later run of one cell: the other keeps its record, the page still shows both.
  RunRecord later;
  later.started = "2025-11-23T01:00:00Z";
  later.cells = {ok_cell("cp312", w312)};
  publish_wheelhouse(house, later, {});
  const RunRecord now = read_report(house).value().value();
  ASSERT_EQ(now.earlier.size(), 1u);
  EXPECT_EQ(now.earlier[0].id, "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64");
  EXPECT_THAT(ScratchDir::read(house / "index.html"), HasSubstr("run of 2025-11-22T01:00:00Z"));

  // `fabuild index` alone after a wheel is removed by hand: the same page less that wheel.
  fs::remove(house / w311);
  const Published again = publish_wheelhouse(house, std::nullopt, {});
  EXPECT_EQ(again.catalog.wheels.size(), 1u);
  EXPECT_TRUE(again.has_run);
  EXPECT_THAT(ScratchDir::read(house / "simple/flash-attn/index.html"), Not(HasSubstr("cp311")));
  EXPECT_THAT(ScratchDir::read(house / "index.html"), HasSubstr("its wheel is no longer in the wheelhouse"));
  EXPECT_EQ(read_report(house).value()->earlier.size(), 1u) << "regenerating does not change the record";
}

// report.json names each wheel's build record, as the page links it: there when the manifest
// entry has one, absent when it has none.
TEST(Publish, TheReportNamesEachWheelsBuildRecord) {
  ScratchDir dir("fabuild-publish");
  const fs::path house = dir.path();
  const std::string wheel = test::file_test_wheel(house, "cp312");
  FiledWheel entry;
  entry.wheel = wheel;
  entry.sha256 = hex(sha256_of_file(house / wheel).value());
  entry.size = fs::file_size(house / wheel);
  entry.build = R"({"fabuild": {"version": "0.1.0"}})";
  std::map<std::string, FiledWheel> manifest{{"fa2.8.3-torch2.8-cu128-cp312-linux_x86_64", entry}};
  PublishOptions options;
  options.manifest = &manifest;
  RunRecord run;
  run.started = "2025-11-22T01:00:00Z";
  run.cells = {ok_cell("cp312", wheel)};
  publish_wheelhouse(house, run, options);
  const std::string record = wheel + ".build.json";
  EXPECT_THAT(ScratchDir::read(house / "report.json"), HasSubstr("\"build_record\": \"" + record + "\""));
  EXPECT_EQ(read_report(house).value()->cells.at(0).build_record, record);
  EXPECT_TRUE(fs::exists(house / record));
  EXPECT_THAT(ScratchDir::read(house / "index.html"), HasSubstr(">build record</a>"));

  manifest.begin()->second.build.clear();  // filed before fabuild wrote records
  publish_wheelhouse(house, run, options);
  EXPECT_THAT(ScratchDir::read(house / "report.json"), Not(HasSubstr("build_record")));
  EXPECT_FALSE(fs::exists(house / record));
}

TEST(Publish, LeavesNoTemporaryFilesBehind) {
  ScratchDir dir("fabuild-publish");
  test::file_test_wheel(dir.path(), "cp312");
  publish_wheelhouse(dir.path(), std::nullopt, {});
  publish_wheelhouse(dir.path(), std::nullopt, {});
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    EXPECT_THAT(e.path().filename().string(), Not(HasSubstr(".tmp."))) << e.path();
  }
}

TEST(Publish, ABrokenPreviousReportIsReplacedWithAWarning) {
  ScratchDir dir("fabuild-publish");
  std::ofstream(dir.path() / "report.json") << "{ nope";
  EXPECT_THROW(publish_wheelhouse(dir.path(), std::nullopt, {}), UserError) << "fabuild index says so";
  RunRecord run;
  run.started = "2025-11-22T01:00:00Z";
  const Published p = publish_wheelhouse(dir.path(), run, {});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_THAT(p.warnings[0], HasSubstr("the cells of earlier runs are not carried over"));
  EXPECT_EQ(read_report(dir.path()).value()->started, "2025-11-22T01:00:00Z");
}

TEST(Publish, NotADirectoryIsExit2) {
  ScratchDir dir("fabuild-publish");
  std::ofstream(dir.path() / "file") << "x";
  try {
    publish_wheelhouse(dir.path() / "file", std::nullopt, {});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), kExitBadConfig);
    EXPECT_THAT(e.message(), HasSubstr("not a directory"));
  }
}

}  // namespace
}  // namespace fabuild
