// The run record of a merged wheelhouse (app/merge_report.h): the parts' records as one run,
// with the torch releases their plans found.

#include "app/merge_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

fs::path part(const fs::path& dir, const RunRecord& run) {
  fs::create_directories(dir);
  std::ofstream(dir / "report.json") << report_json(run);
  return dir;
}

TEST(MergeReport, TheTorchReleasesThePartsFoundAreKeptOnce) {
  test::ScratchDir dir{"fabuild-merge-report"};
  RunRecord build;
  build.started = "2026-11-27T02:00:00Z";
  build.matrix = "m.yaml";
  build.torch_index = "pip's configured index";
  build.torch_releases = {{"2.11.0", "13.0", "2026-11-20T02:00:00Z", true}, {"2.16.0", "13.2", "", true}};
  build.new_torch = {"2.16.0"};
  RunRecord verify = build;  // a verify job planned a little later: it saw 2.16 listed too
  verify.started = "2026-11-27T02:10:00Z";
  verify.torch_releases = {{"2.11.0", "13.0", "2026-11-19T02:00:00Z", true},
                           {"2.16.0", "13.2", "", true},
                           {"2.9.1", "12.8", "2026-11-01T02:00:00Z", false}};
  RunRecord windows;  // a part that did not ask the torch index
  windows.started = "2026-11-27T02:05:00Z";
  std::vector<std::string> warnings;
  const auto merged = merged_run_record(
      {part(dir.path() / "a", build), part(dir.path() / "b", verify), part(dir.path() / "c", windows)}, warnings);
  ASSERT_TRUE(merged);
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_EQ(merged->torch_index, "pip's configured index");
  ASSERT_EQ(merged->torch_releases.size(), 3U);
  EXPECT_EQ(merged->torch_releases[0].version, "2.11.0");
  EXPECT_EQ(merged->torch_releases[0].first_seen, "2026-11-19T02:00:00Z");  // the earliest
  EXPECT_EQ(merged->torch_releases[2].version, "2.9.1");
  EXPECT_FALSE(merged->torch_releases[2].listed);
  EXPECT_THAT(merged->new_torch, ElementsAre("2.16.0"));
}

}  // namespace
}  // namespace fabuild
