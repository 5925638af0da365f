// CI through the real binary: --ci-matrix github, --shard auto, and fabuild merge.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "run_binary.h"
#include "util/hash.h"
#include "wheel/manifest.h"
#include "wheel/wheelhouse.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::run_fabuild;
using ::testing::HasSubstr;
using ::testing::Not;

// versions x 2 CUDA sets x 4 Pythons, command cells (nothing to provision).
std::string matrix_text(int versions, const std::string& extra = "") {
  std::string yaml = "versions: [";
  for (int i = 0; i < versions; ++i) yaml += fmt::format("{}\"2.{}.{}\"", i ? ", " : "", 8 + i / 100, i % 100);
  return yaml +
         "]\ntorch: [\"2.8\"]\ncuda: [\"12.6\", \"12.8\"]\npython: [cp310, cp311, cp312, cp313]\n"
         "archs: {default: \"80\", \"12.8\": \"80;90\"}\ncommand: [\"true\"]\n" +
         extra;
}

fs::path write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path;
}

std::vector<std::string> listed_ids(const std::vector<std::string>& args) {
  const auto r = run_fabuild(args);
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<std::string> ids;
  for (const auto& c : nlohmann::json::parse(r.out)) ids.push_back(c["id"].get<std::string>());
  return ids;
}

// Issue 17's done-when, on matrix/publish-shaped.yaml as shipped: FlashAttention's publish
// workflow (56 cells of 14 rows, with a PyTorch-style index giving every torch CUDA build) is 14
// jobs of one row each, the aarch64 rows on the aarch64 runner.
TEST(CiMatrixCli, TheUpstreamShapedMatrixIsOneJobPerRowOnItsPlatformsRunner) {
  const auto r = run_fabuild({FABUILD_SOURCE_DIR "/matrix/publish-shaped.yaml", "--ci-matrix", "github",
                              "--torch-index", "https://torch-index.invalid/whl"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("56 cells in 14 jobs"));
  const auto jobs = nlohmann::json::parse(r.out)["include"];
  ASSERT_EQ(jobs.size(), 14u);
  int cells = 0, arm = 0;
  for (const auto& job : jobs) {
    const std::string name = job["name"];
    EXPECT_EQ(job["rows"], 1) << name;
    cells += job["cells"].get<int>();
    const bool aarch64 = name.find("linux_aarch64") != std::string::npos;
    arm += aarch64 ? 1 : 0;
    EXPECT_EQ(job["runner"], aarch64 ? "ubuntu-24.04-arm" : "ubuntu-latest") << name;
  }
  EXPECT_EQ(cells, 56);
  EXPECT_EQ(arm, 6);  // torch 2.7-2.10 on 12.9.1, 2.9-2.10 on 13.0.1
}

TEST(CiMatrixCli, AThousandCellsGiveAValidGithubMatrixOf250RowJobs) {
  test::ScratchDir dir("fabuild-ci-cli");
  const auto m = write_file(dir.path() / "m.yaml", matrix_text(125, "ci: {runner: big-runner}\n")).string();
  const auto r = run_fabuild({m, "--ci-matrix", "github"});
  ASSERT_EQ(r.code, 0) << r.err;
  // One line: what `echo "matrix=$(fabuild ...)" >> $GITHUB_OUTPUT` needs.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  const auto json = nlohmann::json::parse(r.out);
  ASSERT_EQ(json.size(), 1u);
  const auto& include = json.at("include");
  ASSERT_TRUE(include.is_array());
  ASSERT_EQ(include.size(), 250u);  // 250 rows of 4 Python tags
  std::size_t cells = 0;
  for (const auto& entry : include) {
    ASSERT_TRUE(entry.is_object());
    for (const auto& [key, value] : entry.items()) EXPECT_TRUE(value.is_string() || value.is_number()) << key;
    EXPECT_EQ(entry["runner"], "big-runner");
    EXPECT_TRUE(entry["timeout"].is_number_integer());
    EXPECT_EQ(entry["args"].get<std::string>(), "--only " + entry["only"].get<std::string>());
    EXPECT_EQ(entry["cells"], 4);
    cells += entry["cells"].get<std::size_t>();
  }
  EXPECT_EQ(cells, 1000u);
  EXPECT_THAT(r.err, HasSubstr("1000 cells in 250 jobs (a row's Python tags in one job, compiled once) on big-runner"));
  // --split-rows: more cells than jobs, so 256 balanced shards.
  const auto split = run_fabuild({m, "--ci-matrix", "github", "--split-rows"});
  ASSERT_EQ(split.code, 0) << split.err;
  const auto shards = nlohmann::json::parse(split.out).at("include");
  ASSERT_EQ(shards.size(), 256u);
  for (const auto& entry : shards) {
    EXPECT_THAT(entry["args"].get<std::string>(),
                HasSubstr("--split-rows --shard " + entry["shard"].get<std::string>()));
  }
  EXPECT_THAT(split.err, HasSubstr("1000 cells in 256 jobs (shards balanced by expected cost) on big-runner"));
}

TEST(CiMatrixCli, EachJobSelectsExactlyItsCellsAndTogetherEveryCellOnce) {
  test::ScratchDir dir("fabuild-ci-cli");
  const auto m = write_file(dir.path() / "m.yaml", matrix_text(5, "ci: {max_entries: 6}\n")).string();
  const auto all = listed_ids({m, "--python", "cp311,cp312", "--list", "--format", "json"});
  ASSERT_EQ(all.size(), 20u);
  const auto r = run_fabuild({m, "--python", "cp311,cp312", "--ci-matrix", "github"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto include = nlohmann::json::parse(r.out)["include"];
  ASSERT_EQ(include.size(), 6u);
  std::multiset<std::string> union_of_jobs;
  for (const auto& entry : include) {
    // The job runs with the filters it was planned with and its shard (what the workflow passes).
    const auto ids =
        listed_ids({m, "--python", "cp311,cp312", "--shard", entry["shard"], "--list", "--format", "json"});
    EXPECT_EQ(ids.size(), entry["cells"].get<std::size_t>());
    EXPECT_EQ(entry["args"], "--python cp311,cp312 --shard " + entry["shard"].get<std::string>());
    union_of_jobs.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(union_of_jobs, std::multiset<std::string>(all.begin(), all.end()));

  // Few enough cells: one job each, selected by --only alone.
  const auto per_cell = run_fabuild({m, "--python", "cp311", "--cuda", "12.8", "--ci-matrix", "github"});
  ASSERT_EQ(per_cell.code, 0) << per_cell.err;
  const auto jobs = nlohmann::json::parse(per_cell.out)["include"];
  ASSERT_EQ(jobs.size(), 5u);
  for (const auto& entry : jobs) {
    EXPECT_EQ(entry["shard"], "");
    EXPECT_EQ(listed_ids({m, "--only", entry["only"], "--list", "--format", "json"}),
              std::vector<std::string>{entry["only"].get<std::string>()});
  }
}

TEST(CiMatrixCli, BadCombinationsAreExit2AndNothingSelectedIsExit3) {
  test::ScratchDir dir("fabuild-ci-cli");
  const auto m = write_file(dir.path() / "m.yaml", matrix_text(1)).string();
  const auto shard = run_fabuild({m, "--ci-matrix", "github", "--shard", "1/2"});
  EXPECT_EQ(shard.code, 2);
  EXPECT_THAT(shard.err, HasSubstr("--ci-matrix lays out every shard itself"));
  EXPECT_EQ(run_fabuild({m, "--ci-matrix", "jenkins"}).code, 2);
  EXPECT_EQ(run_fabuild({m, "--ci-matrix", "github", "--dry-run"}).code, 2);
  const auto bad = write_file(dir.path() / "bad.yaml", matrix_text(1, "ci: {max_entries: 257}\n")).string();
  const auto too_many = run_fabuild({bad, "--ci-matrix", "github"});
  EXPECT_EQ(too_many.code, 2);
  EXPECT_THAT(too_many.err, HasSubstr("bad.yaml:7:19: ci.max_entries is 257"));
  const auto glob = run_fabuild({m, "--ci-matrix", "github", "--only", "*-cp310-*", "--python", "cp311"});
  EXPECT_EQ(glob.code, 3);
  const auto empty =
      run_fabuild({m, "--ci-matrix", "github", "--only", "*-cp310-*", "--python", "cp311", "--allow-empty"});
  EXPECT_EQ(empty.code, 0);
  EXPECT_EQ(empty.out, "{\"include\":[]}\n");
}

test::Result run_with_env(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  const auto bg = test::spawn_fabuild(args, FABUILD_SOURCE_DIR, env);
  return test::wait_fabuild(bg, std::chrono::minutes(1));
}

TEST(ShardAutoCli, TakesTheShardFromTheCiAndSaysFromWhere) {
  test::ScratchDir dir("fabuild-ci-cli");
  const auto m = write_file(dir.path() / "m.yaml", matrix_text(2)).string();
  const auto whole = listed_ids({m, "--list", "--format", "json"});
  std::multiset<std::string> gitlab;
  std::multiset<std::string> buildkite;
  for (int job = 0; job < 3; ++job) {
    const auto g = run_with_env({m, "--shard", "auto", "--list", "--format", "json"},
                                {"CI_NODE_INDEX=" + std::to_string(job + 1), "CI_NODE_TOTAL=3"});
    ASSERT_EQ(g.code, 0) << g.err;
    EXPECT_THAT(g.err, HasSubstr(fmt::format("shard {}/3 from CI_NODE_INDEX={}, CI_NODE_TOTAL=3 (GitLab parallel:)",
                                             job + 1, job + 1)));
    for (const auto& c : nlohmann::json::parse(g.out)) gitlab.insert(c["id"].get<std::string>());
    const auto b = run_with_env({m, "--shard", "auto", "--list", "--format", "json"},
                                {"BUILDKITE_PARALLEL_JOB=" + std::to_string(job), "BUILDKITE_PARALLEL_JOB_COUNT=3"});
    ASSERT_EQ(b.code, 0) << b.err;
    for (const auto& c : nlohmann::json::parse(b.out)) buildkite.insert(c["id"].get<std::string>());
    // The same job number is the same shard on either CI, and the same as --shard K/N.
    EXPECT_EQ(nlohmann::json::parse(b.out), nlohmann::json::parse(g.out));
    EXPECT_EQ(nlohmann::json::parse(g.out),
              nlohmann::json::parse(
                  run_fabuild({m, "--shard", fmt::format("{}/3", job + 1), "--list", "--format", "json"}).out));
  }
  EXPECT_EQ(gitlab, std::multiset<std::string>(whole.begin(), whole.end()));
  EXPECT_EQ(buildkite, gitlab);
}

TEST(ShardAutoCli, WithoutCiVariablesItIsExit2WithWhatToSet) {
  test::ScratchDir dir("fabuild-ci-cli");
  const auto m = write_file(dir.path() / "m.yaml", matrix_text(1)).string();
  // Whatever the CI running this test sets, these are empty here (empty counts as unset).
  const auto r =
      run_with_env({m, "--shard", "auto", "--list"}, {"FABUILD_SHARD=", "CI_NODE_INDEX=", "CI_NODE_TOTAL=",
                                                      "BUILDKITE_PARALLEL_JOB=", "BUILDKITE_PARALLEL_JOB_COUNT="});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("fabuild: error: --shard auto: no CI parallel-job variables are set"));
  EXPECT_THAT(r.err,
              HasSubstr("hint: --shard auto reads FABUILD_SHARD=K/N, CI_NODE_INDEX/CI_NODE_TOTAL (GitLab parallel:)"));
  const auto bad = run_with_env({m, "--shard", "auto", "--list"}, {"FABUILD_SHARD=0/2"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("FABUILD_SHARD='0/2' is not K/N"));
}

// A partial wheelhouse with one filed wheel whose bytes depend on `flavour`.
fs::path part_with(const fs::path& root, const std::string& flavour) {
  test::TestWheel w;
  w.files["flash_attn/flavour.txt"] = flavour;
  const fs::path staging = root / ".staging";
  fs::create_directories(staging);
  const FiledFile filed = file_wheel(w.write(staging), root / "fa2.8.3/torch2.8/cu128").value();
  FiledWheel entry;
  entry.wheel = "fa2.8.3/torch2.8/cu128/" + w.file_name();
  entry.sha256 = filed.sha256;
  entry.size = filed.size;
  EXPECT_TRUE(record_filed(root, "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64", entry));
  fs::remove_all(staging);
  return root;
}

TEST(MergeCli, HelpAndTheMainHelpNameIt) {
  const auto r = run_fabuild({"merge", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("fabuild merge"));
  EXPECT_THAT(r.out, HasSubstr("--output-dir"));
  EXPECT_THAT(r.out, HasSubstr("--dry-run"));
  EXPECT_THAT(r.out, HasSubstr("1 refused (a conflict or a damaged part)"));
  const auto main_help = run_fabuild({"--help"}).out;
  EXPECT_THAT(main_help, HasSubstr("fabuild merge PART... -o OUT"));
  EXPECT_THAT(main_help, HasSubstr("--ci-matrix"));
  EXPECT_THAT(main_help, HasSubstr("'auto'"));
}

TEST(MergeCli, MergesPublishesAndRefusesAConflictNamingBothPartsAndDigests) {
  test::ScratchDir dir("fabuild-merge-cli");
  const fs::path a = part_with(dir.path() / "a", "first build");
  const fs::path b = part_with(dir.path() / "b", "second build");
  const fs::path again = part_with(dir.path() / "again", "first build");  // the same bytes
  const fs::path out = dir.path() / "out";
  const std::string wheel = "fa2.8.3/torch2.8/cu128/" + test::TestWheel().file_name();

  const auto ok = run_fabuild({"merge", a.string(), again.string(), "-o", out.string()});
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("fabuild: merged 2 parts into " + out.string()));
  EXPECT_THAT(ok.out, HasSubstr("wheels      1 copied, 0 already there\n  manifest    1 cell added, 0 already there"));
  EXPECT_THAT(ok.out, HasSubstr("taken once: " + wheel + ": identical in " + a.string() + " and " + again.string()));
  EXPECT_THAT(ok.out, HasSubstr("fabuild: index: 1 wheel in " + out.string() + "/simple/"));
  EXPECT_TRUE(fs::exists(out / "index.html"));
  EXPECT_TRUE(fs::exists(out / "cu128/torch2.8/simple/flash-attn/index.html"));

  const auto before = test::slurp(out / wheel);
  const auto refused = run_fabuild({"merge", b.string(), "-o", out.string()});
  EXPECT_EQ(refused.code, 1);
  const std::string sha_a = hex(sha256_of_file(a / wheel).value());
  const std::string sha_b = hex(sha256_of_file(b / wheel).value());
  EXPECT_THAT(refused.err, HasSubstr("fabuild: error: merge refused, nothing was written to " + out.string() +
                                     ": 2 names with two different versions"));
  EXPECT_THAT(refused.err, HasSubstr("  " + wheel + "\n    " + out.string() + " (already there): sha256 " + sha_a +
                                     "\n    " + b.string() + ": sha256 " + sha_b));
  EXPECT_THAT(refused.err, HasSubstr("hint: a wheel is never replaced by a different one"));
  EXPECT_EQ(test::slurp(out / wheel), before);

  const auto two_parts =
      run_fabuild({"merge", "--dry-run", a.string(), b.string(), "-o", (dir.path() / "new").string()});
  EXPECT_EQ(two_parts.code, 1);
  EXPECT_THAT(two_parts.err,
              HasSubstr("    " + a.string() + ": sha256 " + sha_a + "\n    " + b.string() + ": sha256 " + sha_b));
  EXPECT_FALSE(fs::exists(dir.path() / "new"));
}

TEST(MergeCli, BadArgumentsAreExit2) {
  test::ScratchDir dir("fabuild-merge-cli");
  const auto missing = run_fabuild({"merge", (dir.path() / "nope").string(), "-o", (dir.path() / "out").string()});
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("merge: the part " + (dir.path() / "nope").string() + " is not a directory"));
  EXPECT_EQ(run_fabuild({"merge", dir.path().string()}).code, 2);        // no -o
  EXPECT_EQ(run_fabuild({"merge", "-o", dir.path().string()}).code, 2);  // no part
}

}  // namespace
}  // namespace fabuild
