#include "publish/run_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/error.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;

CellRecord cell(const std::string& id, const std::string& status) {
  CellRecord c;
  c.id = id;
  c.status = status;
  c.start_s = 1.5;
  c.duration_s = 61;
  c.max_jobs = 8;
  c.nvcc_threads = 2;
  c.memory_gb = 80;
  c.toolchain = "container pytorch/manylinux2_28-builder:cuda12.8";
  c.versions = {{"nvcc", "12.8"}};
  c.wheel = "fa2.8.3/torch2.8/cu128/x.whl";
  c.sha256 = std::string(64, 'c');
  c.size = 123;
  c.log = "logs/" + id + ".log";
  c.dir = "fa2.8.3/torch2.8/cu128";
  c.python = "cp312";
  c.platform = "linux_x86_64";
  return c;
}

// The torch releases the index had (docs/stable-abi.md): what is new since the last run that
// asked, and what the index withdrew, which stays in the record.
TEST(RunRecord, TheTorchIndexsReleasesKeepTheirHistory) {
  RunRecord first;
  first.started = "2026-11-26T02:23:00Z";
  first.torch_index = "pip's configured index";
  first.torch_releases = {{"2.13.0", "13.0", "", true}, {"2.14.1", "13.0", "", true}};
  first = with_torch_history(first, std::nullopt);
  EXPECT_TRUE(first.new_torch.empty());  // the first look finds nothing "new"
  EXPECT_EQ(first.torch_releases[0].first_seen, "2026-11-26T02:23:00Z");
  const RunRecord reread = parse_report(report_json(first), "report.json").value();
  ASSERT_EQ(reread.torch_releases.size(), 2U);
  EXPECT_EQ(reread.torch_index, "pip's configured index");

  RunRecord second;
  second.started = "2026-11-27T02:23:00Z";
  second.torch_releases = {{"2.14.1", "13.0", "", true}, {"2.16.0", "13.0", "", true}};
  second = with_torch_history(second, reread);
  EXPECT_EQ(second.new_torch, std::vector<std::string>{"2.16.0"});
  ASSERT_EQ(second.torch_releases.size(), 3U);
  EXPECT_EQ(second.torch_releases[0].first_seen, "2026-11-26T02:23:00Z");  // 2.14.1, seen before
  EXPECT_EQ(second.torch_releases[1].first_seen, "2026-11-27T02:23:00Z");  // 2.16.0
  EXPECT_EQ(second.torch_releases[2].version, "2.13.0");                   // withdrawn, kept
  EXPECT_FALSE(second.torch_releases[2].listed);

  RunRecord third;  // a run that did not ask keeps the history as it was
  third.started = "2026-11-28T02:23:00Z";
  third = with_torch_history(third, second);
  EXPECT_EQ(third.torch_releases.size(), 3U);
  EXPECT_TRUE(third.new_torch.empty());
}

TEST(RunRecord, RoundTripsThroughReportJson) {
  RunRecord run;
  run.started = "2025-11-22T03:04:05Z";
  run.matrix = "matrix.yaml";
  run.elapsed_s = 100;
  run.budget_cores = 16;
  run.budget_memory_gb = 110.5;
  run.exit_code = 1;
  run.cells = {cell("a", "ok"), cell("b", "failed")};
  run.cells[1].detail = "build: exit 1";
  run.cells[1].start_s.reset();
  run.cells[0].needs = {{"glibc", "2.28"}, {"glibcxx", "3.4.21"}};
  run.preparation = {cell("env-cp312", "ok")};
  const std::string text = report_json(run);
  EXPECT_THAT(text, HasSubstr("\"start_s\": null"));
  EXPECT_THAT(text, HasSubstr("\"needs\": {"));
  EXPECT_THAT(text, HasSubstr("\"glibc\": \"2.28\""));
  const RunRecord back = parse_report(text, "report.json").value();
  EXPECT_EQ(report_json(back), text);
  EXPECT_EQ(back.cells[1].detail, "build: exit 1");
  EXPECT_FALSE(back.cells[1].start_s.has_value());
  EXPECT_EQ(back.cells[0].max_jobs, 8);
  EXPECT_EQ(back.cells[0].needs.at("glibc"), "2.28");
  EXPECT_TRUE(back.cells[1].needs.empty()) << "unknown: no key in report.json";
  EXPECT_TRUE(back.cells[0].built());
  EXPECT_TRUE(back.cells[1].failed());
}

TEST(RunRecord, ALibraryCellNamesItsArchiveUnderLibrary) {
  RunRecord run;
  run.cells = {cell("fa3.0.0-lib-cu130-linux_x86_64-minimal", "ok")};
  run.cells[0].wheel = "fa3.0.0/lib/cu130/minimal/flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64.tar.gz";
  run.cells[0].library = true;
  run.cells[0].python = "";
  const std::string text = report_json(run);
  EXPECT_THAT(text, HasSubstr("\"library\": \"fa3.0.0/lib/cu130/minimal/flash_attn_3-"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\"wheel\"")));
  const RunRecord back = parse_report(text, "report.json").value();
  EXPECT_TRUE(back.cells[0].library);
  EXPECT_EQ(back.cells[0].wheel, run.cells[0].wheel);
}

TEST(RunRecord, CellsOfEarlierRunsKeepTheirLastRecord) {
  RunRecord first;
  first.started = "2025-11-21T00:00:00Z";
  first.cells = {cell("a", "ok"), cell("b", "failed")};
  RunRecord second;
  second.started = "2025-11-22T00:00:00Z";
  second.cells = {cell("b", "ok")};
  second = with_earlier(second, first);
  ASSERT_EQ(second.earlier.size(), 1u);
  EXPECT_EQ(second.earlier[0].id, "a");
  EXPECT_EQ(second.earlier[0].run, "2025-11-21T00:00:00Z");

  RunRecord third;
  third.started = "2025-11-23T00:00:00Z";
  third.cells = {cell("c", "ok")};
  third = with_earlier(third, second);
  ASSERT_EQ(third.earlier.size(), 2u);
  EXPECT_EQ(third.earlier[0].id, "b");
  EXPECT_EQ(third.earlier[0].run, "2025-11-22T00:00:00Z");
  EXPECT_EQ(third.earlier[1].id, "a");
  EXPECT_EQ(third.earlier[1].run, "2025-11-21T00:00:00Z") << "an earlier cell keeps the run that settled it";
}

TEST(RunRecord, ABrokenReportIsNamedWithItsPosition) {
  const Expected<RunRecord> broken = parse_report("{\n  \"format\": 1,\n  \"cells\": [ oops ]\n}", "/w/report.json");
  ASSERT_FALSE(broken.has_value());
  EXPECT_THAT(broken.error().what, HasSubstr("/w/report.json:3:14: "));
  EXPECT_THAT(broken.error().what, HasSubstr("not JSON"));
  EXPECT_FALSE(parse_report("{\"format\": 7}", "r.json").has_value());
  EXPECT_FALSE(parse_report("{\"format\": 1, \"cells\": [{\"status\": \"ok\"}]}", "r.json").has_value());
}

}  // namespace
}  // namespace fabuild
