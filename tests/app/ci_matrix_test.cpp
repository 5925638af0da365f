// The GitHub Actions matrix: its shape (what strategy.matrix accepts), one job per cell or
// per shard, the timeouts, and the arguments each job runs with.

#include "app/ci_matrix.h"
#include "app/ci_providers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>

#include "matrix/expand.h"
#include "matrix/loader.h"
#include "matrix/select.h"
#include "util/text.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A matrix of versions x {cu126, cu128} x 4 Pythons: 8 cells per version; the cu128 set
// compiles four archs and cu126 one, so costs differ by four.
MatrixSpec matrix_of(int versions, const std::string& extra = "") {
  std::string yaml = "versions: [";
  for (int i = 0; i < versions; ++i) yaml += fmt::format("{}\"2.{}.{}\"", i ? ", " : "", 8 + i / 100, i % 100);
  yaml +=
      "]\ntorch: [\"2.8\"]\ncuda: [\"12.6\", \"12.8\"]\npython: [cp310, cp311, cp312, cp313]\n"
      "archs: {default: \"80\", \"12.8\": \"80;90;100;120\"}\ntorch_index: https://torch-index.invalid/whl\n" +
      extra;
  return parse_matrix(yaml, "m.yaml");
}

// What GitHub Actions takes as strategy.matrix from fromJSON(): {"include": [...]} with at
// most 256 entries, each a flat object of strings and numbers. Returns what is wrong, or "".
std::string github_matrix_problem(const nlohmann::ordered_json& m) {
  if (!m.is_object() || m.size() != 1 || !m.contains("include")) return "not an object with only 'include'";
  const auto& include = m["include"];
  if (!include.is_array()) return "include is not a list";
  if (include.size() > 256) return fmt::format("{} entries, more than GitHub's 256", include.size());
  std::set<std::string> keys;
  for (const auto& entry : include) {
    if (!entry.is_object() || entry.empty()) return "an entry is not a non-empty object: " + entry.dump();
    std::set<std::string> these;
    for (const auto& [key, value] : entry.items()) {
      if (!value.is_string() && !value.is_number()) return "entry key " + key + " is neither a string nor a number";
      these.insert(key);
    }
    if (keys.empty()) keys = these;
    if (these != keys) return "entries have different keys: " + entry.dump();
  }
  return "";
}

std::vector<Cell> cells_of(const MatrixSpec& spec) { return expand(spec).cells; }

TEST(CiMatrix, OneJobPerCellWithItsIdRunnerAndTimeout) {
  const MatrixSpec spec = matrix_of(1, "ci: {runner: gpu-8core, setup_time: 20m, time_per_arch: 45m}\n");
  const auto cells = cells_of(spec);
  ASSERT_EQ(cells.size(), 8u);
  const CiMatrix m = plan_ci_jobs(cells, spec.ci, Filters{}, Rows::kSplit);
  ASSERT_EQ(m.jobs.size(), 8u);
  const auto json = github_matrix_json(m);
  EXPECT_EQ(github_matrix_problem(json), "");
  const auto& first = json["include"][0];
  EXPECT_EQ(first["name"], "fa2.8.0-torch2.8-cu126-cp310-linux_x86_64");
  EXPECT_EQ(first["runner"], "gpu-8core");
  EXPECT_EQ(first["timeout"], 20 + 45);                   // one arch
  EXPECT_EQ(json["include"][4]["timeout"], 20 + 4 * 45);  // cu128: four archs
  EXPECT_EQ(first["cells"], 1);
  EXPECT_EQ(first["only"], "fa2.8.0-torch2.8-cu126-cp310-linux_x86_64");
  EXPECT_EQ(first["shard"], "");
  EXPECT_EQ(first["artifact"], "wheelhouse-fa2.8.0-torch2.8-cu126-cp310-linux_x86_64");
  EXPECT_EQ(first["args"], "--only fa2.8.0-torch2.8-cu126-cp310-linux_x86_64");
  EXPECT_THAT(m.warnings, ElementsAre());
}

TEST(CiMatrix, ACellsOwnTimeoutIsItsTimeAndTheMaximumCapsIt) {
  const MatrixSpec spec =
      matrix_of(1,
                "build: {timeout: 3h}\ninclude: [{cuda: \"12.8\", python: cp313, build: {timeout: 9h}}]\n"
                "ci: {setup_time: 30m, max_timeout: 6h}\n");
  const CiMatrix m = plan_ci_jobs(cells_of(spec), spec.ci, Filters{}, Rows::kSplit);
  EXPECT_EQ(m.jobs[0].timeout_minutes, 30 + 180);
  EXPECT_EQ(m.jobs[7].name, "fa2.8.0-torch2.8-cu128-cp313-linux_x86_64");
  EXPECT_EQ(m.jobs[7].timeout_minutes, 360);
  EXPECT_THAT(m.warnings, ElementsAre("fa2.8.0-torch2.8-cu128-cp313-linux_x86_64: may need 570 minutes, more than "
                                      "ci.max_timeout (360 minutes); its timeout is 360 minutes"));
}

TEST(CiMatrix, AThousandCellsAreGroupedIntoAtMost256BalancedShards) {
  const MatrixSpec spec = matrix_of(125, "ci: {setup_time: 30m, time_per_arch: 10m, max_timeout: 120h}\n");
  const auto cells = cells_of(spec);
  ASSERT_EQ(cells.size(), 1000u);
  Filters filters;
  filters[Axis::kGpu] = {"12.6", "12.8"};
  filters[Axis::kPython] = {"cp31*"};
  const CiMatrix m = plan_ci_jobs(cells, spec.ci, filters, Rows::kSplit);
  const auto json = github_matrix_json(m);
  EXPECT_EQ(github_matrix_problem(json), "");
  ASSERT_EQ(json["include"].size(), 256u);

  std::size_t covered = 0;
  std::set<std::string> artifacts;
  int longest = 0;
  int shortest = 1 << 30;
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    const CiJob& job = m.jobs[i];
    const auto& entry = json["include"][i];
    const std::string shard = fmt::format("{}/256", i + 1);
    EXPECT_EQ(entry["shard"], shard);
    EXPECT_EQ(entry["only"], "");
    EXPECT_EQ(entry["args"], "--cuda 12.6,12.8 --python 'cp31*' --split-rows --shard " + shard);
    EXPECT_EQ(entry["name"], fmt::format("shard {} ({} cell{})", shard, job.cells, job.cells == 1 ? "" : "s"));
    EXPECT_GE(job.cells, 1u);
    covered += job.cells;
    artifacts.insert(job.artifact);
    // Each job's timeout is its shard's own cells, after setup.
    double minutes = 30;
    for (const auto& c : shard_cells(cells, *job.shard, Rows::kSplit)) minutes += 10 * expected_cost(c);
    EXPECT_EQ(job.timeout_minutes, static_cast<int>(minutes));
    longest = std::max(longest, job.timeout_minutes);
    shortest = std::min(shortest, job.timeout_minutes);
  }
  EXPECT_EQ(covered, 1000u);
  EXPECT_EQ(artifacts.size(), 256u);
  // Balanced by cost: 2500 arch-compiles over 256 shards, no shard more than a cell (4 archs,
  // 40 minutes) above another.
  EXPECT_LE(longest - shortest, 40);
}

TEST(CiMatrix, MaxEntriesGroupsEarlier) {
  const MatrixSpec spec = matrix_of(2, "ci: {max_entries: 3}\n");
  const CiMatrix m = plan_ci_jobs(cells_of(spec), spec.ci, Filters{}, Rows::kSplit);
  ASSERT_EQ(m.jobs.size(), 3u);
  EXPECT_EQ(m.jobs[2].args, (std::vector<std::string>{"--split-rows", "--shard", "3/3"}));
  EXPECT_EQ(m.jobs[0].cells + m.jobs[1].cells + m.jobs[2].cells, 16u);
}

// FlashAttention's publish workflow, as fabuild would lay it out: torch 2.6-2.10 x CUDA 12.9/13.0
// x cp310-cp313 x x86_64/aarch64, both C++ ABIs for torch 2.6.
MatrixSpec upstream_shaped(const std::string& ci) {
  return parse_matrix(
      "versions: [\"2.8.3\"]\ntorch: [\"2.6\", \"2.7\", \"2.8\", \"2.9\", \"2.10\"]\n"
      "cuda: [\"12.9\", \"13.0\"]\npython: [cp310, cp311, cp312, cp313]\n"
      "platform: [linux_x86_64, linux_aarch64]\narchs: \"80;90;100;120\"\n"
      "cxx11_abi: [\"TRUE\", \"FALSE\"]\nexclude: [{torch: [\"2.7\", \"2.8\", \"2.9\", \"2.10\"], cxx11_abi: "
      "\"FALSE\"}]\n"
      "torch_index: https://torch-index.invalid/whl\n" +
          ci,
      "m.yaml");
}

// Without ci.runners, each platform still goes to a runner that can build it: GitHub's hosted
// arm64 runner for linux_aarch64; ci.runners replaces that one entry by entry.
TEST(CiMatrix, EachPlatformHasARunnerThatCanBuildItByDefault) {
  const MatrixSpec plain = upstream_shaped("");
  const CiMatrix m = plan_ci_jobs(cells_of(plain), plain.ci, Filters{});
  std::set<std::pair<std::string, std::string>> seen;  // (platform in the name, runner)
  for (const CiJob& job : m.jobs)
    seen.emplace(job.name.find("aarch64") != std::string::npos ? "arm" : "x86", job.runner);
  EXPECT_EQ(seen,
            (std::set<std::pair<std::string, std::string>>{{"arm", "ubuntu-24.04-arm"}, {"x86", "ubuntu-latest"}}));
  const MatrixSpec own = upstream_shaped("ci: {runner: box, runners: {linux_aarch64: arm-box}}\n");
  EXPECT_EQ(own.ci.runners.at("linux_aarch64"), "arm-box");
  EXPECT_EQ(own.ci.runners.at("win_amd64"), "windows-latest");
  for (const CiJob& job : plan_ci_jobs(cells_of(own), own.ci, Filters{}).jobs) {
    EXPECT_EQ(job.runner, job.name.find("aarch64") != std::string::npos ? "arm-box" : "box") << job.name;
  }
}

TEST(CiMatrix, OneJobPerRowOnItsPlatformsRunner) {
  const MatrixSpec spec = upstream_shaped(
      "ci: {max_entries: 16, runners: {linux_x86_64: ubuntu-latest, linux_aarch64: ubuntu-24.04-arm}}\n");
  const auto cells = cells_of(spec);
  const std::size_t rows = rows_of(cells).size();
  // 56 cells, each row four Python tags: torch 2.6's cxx11abiFALSE cells are dropped (its cu126
  // build and its aarch64 builds are C++11 ABI).
  ASSERT_EQ(rows, 14u);
  const CiMatrix m = plan_ci_jobs(cells, spec.ci, Filters{});
  ASSERT_EQ(m.jobs.size(), rows);
  EXPECT_EQ(github_matrix_problem(github_matrix_json(m)), "");
  std::size_t covered = 0;
  std::set<std::string> keys;
  for (const CiJob& job : m.jobs) {
    EXPECT_EQ(job.rows, 1u);
    EXPECT_FALSE(job.shard.has_value());
    covered += job.cells;
    keys.insert(job.cache_key);
    // --only names exactly the row's cells, each of one platform, on that platform's runner.
    std::set<std::string> row;
    for (const auto& id : split(job.only, ',')) {
      const auto it = std::find_if(cells.begin(), cells.end(), [&](const Cell& c) { return c.id() == id; });
      ASSERT_NE(it, cells.end()) << id;
      row.insert(row_of(*it));
      EXPECT_EQ(job.runner, it->platform == Platform::kLinuxAarch64 ? "ubuntu-24.04-arm" : "ubuntu-latest") << id;
    }
    EXPECT_EQ(row.size(), 1u) << job.name;
  }
  EXPECT_EQ(covered, cells.size());
  EXPECT_EQ(keys.size(), m.jobs.size());
  EXPECT_EQ(m.jobs.front().name, "fa2.8.3-torch2.6-cu126-cp310_cp311_cp312_cp313-linux_x86_64");  // TRUE: its default
  EXPECT_EQ(m.jobs.front().cells, 4u);
}

TEST(CiMatrix, SplitRowsGivesOneJobPerCell) {
  const MatrixSpec spec = upstream_shaped("ci: {max_entries: 256}\n");
  const auto cells = cells_of(spec);
  EXPECT_EQ(plan_ci_jobs(cells, spec.ci, Filters{}, Rows::kSplit).jobs.size(), cells.size());
  EXPECT_EQ(plan_ci_jobs(cells, spec.ci, Filters{}).jobs.size(), rows_of(cells).size());
}

TEST(CiMatrix, ShardsKeepRowsWholeAndPlatformsApart) {
  const MatrixSpec spec = upstream_shaped(
      "ci: {max_entries: 5, runners: {linux_x86_64: ubuntu-latest, linux_aarch64: ubuntu-24.04-arm}}\n");
  const auto cells = cells_of(spec);
  const CiMatrix m = plan_ci_jobs(cells, spec.ci, Filters{});
  ASSERT_EQ(m.jobs.size(), 5u);
  std::map<std::string, int> seen;
  for (const CiJob& job : m.jobs) {
    const bool arm = job.name.starts_with("linux_aarch64");
    EXPECT_EQ(job.runner, arm ? "ubuntu-24.04-arm" : "ubuntu-latest");
    EXPECT_EQ(job.args[0], "--platform");
    Filters only_platform;
    only_platform[Axis::kPlatform] = {job.args[1]};
    std::vector<Cell> part;
    for (const auto& c : cells) {
      if (to_string(c.platform) == job.args[1]) part.push_back(c);
    }
    const auto mine = shard_cells(part, *job.shard);
    EXPECT_EQ(mine.size(), job.cells);
    for (const auto& c : mine) {
      ++seen[row_of(c)];
      EXPECT_EQ(to_string(c.platform), job.args[1]);
    }
  }
  // Every row in one job, whole: 4 cells of it (8 for torch 2.6's two ABIs... which are two rows).
  for (const auto& [row, n] : seen) EXPECT_EQ(n, 4) << row;
}

TEST(CiMatrix, ShellQuotingGivesBackEachArgument) {
  EXPECT_EQ(shell_quote("fa2.8.3-torch2.8-cu128-cp312-linux_x86_64"), "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64");
  EXPECT_EQ(shell_quote("2.8,2.9"), "2.8,2.9");
  EXPECT_EQ(shell_quote("cp31*"), "'cp31*'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$(reboot)"), "'$(reboot)'");
}

}  // namespace
}  // namespace fabuild
