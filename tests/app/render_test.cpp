// The plan as --dry-run prints it (app/render.h), from make_plan over a fake System: the
// heading, the cell table, the lines under it and each cell in full.

#include "app/render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include <fmt/format.h>

#include "../support/fake_files.h"
#include "plan_fixture.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string printed(const Plan& plan, bool details, const Files& files = RealFiles()) {
  std::ostringstream out;
  print_plan(plan, files, out, details);
  return out.str();
}

TEST_F(AppPlan, TheHeadingNamesTheMatrixAsReadAndCountsTheCells) {
  write_matrix("python: [cp311, cp312]\n");
  Options o;
  o.sets.push_back(parse_axis_set("python=cp312"));
  const Plan p = plan(o);
  const std::string text = printed(p, false);
  EXPECT_THAT(text, HasSubstr(matrix_.string() + " --set python=cp312: flash-attn, 1 cell to build\n"));
  EXPECT_THAT(text, HasSubstr("budget: 8 cores"));
  EXPECT_THAT(text, HasSubstr("fa2.8.3-torch2.11-cu130-cp312-linux_x86_64"));
  EXPECT_THAT(text, Not(HasSubstr("cp311")));
}

// A cell under the memory gate gets the memory its kernels' recorded peaks need, not the guess a
// thread: the legend says what its PEAK is.
TEST_F(AppPlan, APeakUnderTheMemoryGateIsWhatTheGateShares) {
  write_matrix("python: [cp311, cp312]\n");
  Plan p = plan();
  ASSERT_EQ(p.cells.size(), 2u);
  p.cells[0].jobs.memory_gate = true;
  EXPECT_THAT(printed(p, false), HasSubstr("PEAK is MAX_JOBS x 5.0 GB per working nvcc thread; for a cell under the "
                                           "memory gate, the memory the gate shares between its compiles by their "
                                           "recorded peaks (note).\n"));
  p.cells[1].jobs.memory_gate = true;
  EXPECT_THAT(printed(p, false),
              HasSubstr("PEAK is the memory the gate shares between its compiles by their recorded peaks (note).\n"));
}

TEST_F(AppPlan, TheTableShowsEachCellsJobsAsTheForecastSetThem) {
  write_matrix("python: [cp311, cp312]\narchs: \"80;90\"\n");
  const Plan p = plan();
  const std::string text = printed(p, false);
  for (const PlannedCell& c : p.cells) {
    EXPECT_THAT(text, HasSubstr(c.id)) << c.id;
    EXPECT_THAT(text, HasSubstr(jobs_text(c.jobs))) << c.id;
  }
  EXPECT_THAT(text, HasSubstr("JOBS is MAX_JOBS x NVCC_THREADS; PEAK is MAX_JOBS x 5.0 GB per working nvcc thread."));
  EXPECT_THAT(text, HasSubstr("per cell:   FLASH_ATTN_CUDA_ARCHS=ARCHS, MAX_JOBS/NVCC_THREADS=JOBS"));
  EXPECT_THAT(text, HasSubstr("wheels:     " + p.wheelhouse + "/fa<version>/torch<series>/cu<xyz>/"));
}

TEST_F(AppPlan, DetailsShowEachCellsWheelJobsAndWhereItsToolkitIsLookedFor) {
  write_matrix("python: [cp312]\n");
  const Plan p = plan();
  const std::string text = printed(p, true);
  const PlannedCell& c = p.cells.at(0);
  EXPECT_THAT(text, HasSubstr("\n" + c.id + "\n  wheel   " + p.filed_path(c)));
  EXPECT_THAT(text,
              HasSubstr(fmt::format("  jobs    MAX_JOBS={} NVCC_THREADS={}", c.jobs.max_jobs, c.jobs.nvcc_threads)));
  EXPECT_THAT(text,
              HasSubstr("  on      host nvcc (the first of toolchains/ entry for CUDA 13.0, /usr/local/cuda-13.0"));
}

TEST_F(AppPlan, ThePlanAsJsonCarriesTheSetFlags) {
  write_matrix("python: [cp311, cp312]\n");
  Options o;
  o.sets.push_back(parse_axis_set("python=cp311"));
  const nlohmann::ordered_json j = plan_json(plan(o));
  EXPECT_EQ(j["sets"], nlohmann::ordered_json::array({"--set python=cp311"}));
  EXPECT_EQ(j["cells"].size(), 1u);
}

// The JSON plan says what the table's "remote cache" line says: whether the run writes, and why.
TEST_F(AppPlan, ThePlanAsJsonSaysWhetherTheRunWritesTheRemote) {
  write_matrix("python: [cp312]\n");
  EXPECT_TRUE(plan_json(plan())["remote_cache"].is_null()) << "no remote";
  write_matrix("python: [cp312]\ncache: {remote: \"http://127.0.0.1:9/c\"}\n");
  system_.env.set("GITHUB_ACTIONS", "true");
  system_.env.set("GITHUB_EVENT_NAME", "pull_request");
  Plan p = plan();
  nlohmann::ordered_json r = plan_json(p)["remote_cache"];
  EXPECT_EQ(r["url"], "http://127.0.0.1:9/c");
  EXPECT_EQ(r["write"], false);
  EXPECT_THAT(r["why"].get<std::string>(), HasSubstr("read-only: untrusted, a pull_request run on GitHub Actions"));
  EXPECT_THAT(r["trust"].get<std::string>(), HasSubstr("not signed"));
  EXPECT_THAT(printed(p, false), HasSubstr("remote cache " + r["why"].get<std::string>()));
  system_.env.set("GITHUB_EVENT_NAME", "schedule");
  r = plan_json(plan())["remote_cache"];
  EXPECT_EQ(r["write"], true);
  EXPECT_THAT(r["why"].get<std::string>(), HasSubstr("writes: trusted, a schedule run on GitHub Actions"));
}

TEST_F(AppPlan, TheToolchainsLineNamesTheFilesThatAreThere) {
  write_matrix("python: [cp312]\n");
  const Plan p = plan();
  ASSERT_EQ(p.toolchains_dir, root_ / "project" / "toolchains");
  const std::string line = "toolchains: " + p.toolchains_dir.string();
  EXPECT_THAT(printed(p, false), HasSubstr(line + " (host.yaml)\n")) << "the fixture wrote host.yaml";
  test::FakeFiles files;
  files.add_file(p.toolchains_dir / "containers.yaml");
  EXPECT_THAT(printed(p, false, files), HasSubstr(line + " (containers.yaml)\n"));
  files.add_file(p.toolchains_dir / "host.yaml");
  EXPECT_THAT(printed(p, false, files), HasSubstr(line + " (host.yaml, containers.yaml)\n"));
  EXPECT_THAT(printed(p, false, test::FakeFiles()), HasSubstr(line + " (no host.yaml or containers.yaml)\n"));
}

}  // namespace
}  // namespace fabuild
