// The CI systems' rows (app/ci_providers.h) on one plan of every kind of job: a row's compile
// shares and its finishing job, a shard, a torch check of the build job's wheel and one of a
// published wheel. The jobs are the plan's; each row only writes them down.

#include "app/ci_providers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

namespace fabuild {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::ordered_json;

CiJob job(const std::string& name, const std::string& stage, const std::string& artifact,
          std::vector<std::string> args) {
  CiJob j;
  j.name = name;
  j.stage = stage;
  j.runner = "big";
  j.timeout_minutes = 90;
  j.artifact = artifact;
  j.args = std::move(args);
  j.cache_key = "0123456789abcdef";
  return j;
}

CiMatrix plan() {
  CiMatrix m;
  for (int k = 1; k <= 2; ++k) {
    CiJob share = job("row share " + std::to_string(k) + "/2", "compile", "logs-row-share-" + std::to_string(k),
                      {"--only", "a,b", "--compile-share", std::to_string(k) + "/2"});
    share.finishing = "row";
    m.jobs.push_back(share);
  }
  CiJob finishing = job("row", "build", "wheelhouse-row", {"--only", "a,b"});
  finishing.shares = 2;
  m.jobs.push_back(finishing);
  CiJob shard = job("shard 1/1 (2 cells)", "build", "wheelhouse-shard-1-of-1", {"--python", "cp312", "--shard", "1/1"});
  shard.shard = Shard{1, 1};
  m.jobs.push_back(shard);
  CiJob check = job("a torch 2.13", "verify", "proof-a-torch2.13", {"--only", "a", "--verify-torch", "2.13"});
  check.needs_artifact = "wheelhouse-row";
  check.only = "a";
  m.jobs.push_back(check);
  CiJob published = job("c torch 2.13", "verify", "proof-c-torch2.13", {"--only", "c", "--verify-torch", "2.13"});
  published.only = "c";
  m.jobs.push_back(published);
  return m;
}

const CiCommand kCommand{"matrix/my matrix.yaml"};

TEST(CiProviders, EveryRowIsFoundByItsName) {
  EXPECT_EQ(ci_provider_names(), "github, gitlab, buildkite");
  for (const CiProvider& p : ci_providers()) EXPECT_EQ(find_ci_provider(p.name), &p);
  EXPECT_EQ(find_ci_provider("jenkins"), nullptr);
}

TEST(CiProviders, GithubIsTheStrategyMatrix) {
  const json out = find_ci_provider("github")->jobs(plan(), kCommand);
  EXPECT_EQ(out, github_matrix_json(plan()));
}

TEST(CiProviders, AGitlabChildPipelineWiresEachJobToWhatItNeeds) {
  const json p = find_ci_provider("gitlab")->jobs(plan(), kCommand);
  EXPECT_EQ(p["stages"], json({"compile", "build", "verify", "merge"}));
  const json& share = p["row share 1/2"];
  EXPECT_EQ(share["stage"], "compile");
  EXPECT_EQ(share["needs"], json::array());
  EXPECT_EQ(share["tags"], json({"big"}));
  EXPECT_EQ(share["timeout"], "90 minutes");
  EXPECT_EQ(share["artifacts"]["paths"], json({"shares/logs-row-share-1/"}));
  EXPECT_EQ(share["script"].back(),
            "build/fabuild 'matrix/my matrix.yaml' --only a,b --compile-share 1/2 -o shares/logs-row-share-1");
  // The finishing job waits for its shares (their objects are on the remote, not in artifacts).
  EXPECT_EQ(p["row"]["needs"], json::parse(R"([{"job": "row share 1/2", "artifacts": false},
                                                {"job": "row share 2/2", "artifacts": false}])"));
  EXPECT_EQ(p["row"]["cache"]["key"], "fabuild-objects-0123456789abcdef");
  CiMatrix shared = plan();  // a remote cache: the jobs share it, none keeps a CI cache
  shared.remote = true;
  const json with_remote = find_ci_provider("gitlab")->jobs(shared, kCommand);
  EXPECT_FALSE(with_remote["row"].contains("cache"));
  EXPECT_FALSE(with_remote["row"].contains("variables"));
  EXPECT_EQ(p["shard 1/1 (2 cells)"]["script"].back(),
            "build/fabuild 'matrix/my matrix.yaml' --python cp312 --shard 1/1 --allow-empty -o "
            "parts/wheelhouse-shard-1-of-1");
  // A torch check takes its build job's part and checks a copy of it.
  const json& check = p["a torch 2.13"];
  EXPECT_EQ(check["needs"], json::parse(R"([{"job": "row", "artifacts": true}])"));
  const auto& lines = check["script"];
  EXPECT_EQ(lines[lines.size() - 2], "mkdir -p parts && cp -R parts/wheelhouse-row parts/proof-a-torch2.13");
  EXPECT_EQ(p["c torch 2.13"]["script"][lines.size() - 2],
            "scripts/ci/fetch-published.sh \"$FABUILD_PAGES_URL\" c parts/proof-c-torch2.13");
  EXPECT_EQ(p["merge"]["stage"], "merge");
  EXPECT_EQ(p["merge"]["when"], "always");
  EXPECT_EQ(p["merge"]["script"].back(), "build/fabuild merge parts/* -o wheelhouse");
}

TEST(CiProviders, ABuildkitePipelineHasKeysDependenciesAndAMergeAfterAll) {
  const json p = find_ci_provider("buildkite")->jobs(plan(), kCommand);
  const json& steps = p["steps"];
  ASSERT_EQ(steps.size(), 7u);
  std::vector<std::string> keys;
  const std::regex key_form("[A-Za-z0-9_:-]+");
  for (const json& s : steps) {
    keys.push_back(s["key"]);
    EXPECT_TRUE(std::regex_match(keys.back(), key_form)) << keys.back();
  }
  EXPECT_THAT(keys, ElementsAre("row-share-1-2", "row-share-2-2", "row", "shard-1-1--2-cells-", "a-torch-2-13",
                                "c-torch-2-13", "merge"));
  EXPECT_EQ(steps[2]["depends_on"], json({"row-share-1-2", "row-share-2-2"}));
  EXPECT_EQ(steps[2]["agents"]["queue"], "big");
  EXPECT_EQ(steps[2]["timeout_in_minutes"], 90);
  EXPECT_EQ(steps[4]["depends_on"], json({"row"}));
  EXPECT_THAT(steps[4]["command"].get<std::string>(),
              HasSubstr("buildkite-agent artifact download 'parts/wheelhouse-row/**/*' . --step row\n"
                        "mkdir -p parts && cp -R parts/wheelhouse-row parts/proof-a-torch2.13\n"));
  EXPECT_FALSE(steps[5].contains("depends_on"));
  // The merge takes every part, whatever became of the jobs; a compile share files nothing.
  EXPECT_EQ(steps[6]["depends_on"], json({"row", "shard-1-1--2-cells-", "a-torch-2-13", "c-torch-2-13"}));
  EXPECT_EQ(steps[6]["allow_dependency_failure"], true);
}

TEST(CiProviders, APlanWithoutJobsIsAPipelineThatSaysSo) {
  for (const char* name : {"gitlab", "buildkite"}) {
    const std::string out = find_ci_provider(name)->jobs(CiMatrix{}, kCommand).dump();
    EXPECT_THAT(out, HasSubstr("nothing to build")) << name;
    EXPECT_THAT(out, Not(HasSubstr("fabuild merge"))) << name;
  }
}

// Every per-system fact is in the row: the variable that says the system runs this job, its
// parallel-job variables, its trust rule and the variables that name a run.
TEST(CiProviders, EachRowCarriesItsSystemsVariablesAndRule) {
  for (const CiProvider& p : ci_providers()) {
    EXPECT_FALSE(p.detect.empty()) << p.name;
    EXPECT_NE(p.trusted, nullptr) << p.name;
    EXPECT_FALSE(p.run_ids.empty()) << p.name;
    Environment env;
    env.set(std::string(p.detect), "true");
    ASSERT_NE(running_ci_provider(env), nullptr) << p.name;
    EXPECT_EQ(running_ci_provider(env)->name, p.name);
  }
  EXPECT_EQ(running_ci_provider(Environment{}), nullptr);
  const auto pairs = ci_shard_variables();
  ASSERT_EQ(pairs.size(), 2u);  // GitHub's jobs get --shard K/N in their args
  EXPECT_STREQ(pairs[0].index, "CI_NODE_INDEX");
  EXPECT_STREQ(pairs[0].total, "CI_NODE_TOTAL");
  EXPECT_EQ(pairs[0].base, 1);
  EXPECT_STREQ(pairs[1].index, "BUILDKITE_PARALLEL_JOB");
  EXPECT_STREQ(pairs[1].total, "BUILDKITE_PARALLEL_JOB_COUNT");
  EXPECT_EQ(pairs[1].base, 0);
  // --shard auto with the table's pairs: Buildkite's 0-based index is the 1-based shard.
  Environment buildkite;
  buildkite.set("BUILDKITE_PARALLEL_JOB", "2");
  buildkite.set("BUILDKITE_PARALLEL_JOB_COUNT", "3");
  const auto s = shard_from_environment(buildkite, pairs);
  EXPECT_EQ(s.shard.index, 3);
  EXPECT_EQ(s.shard.count, 3);
}

}  // namespace
}  // namespace fabuild
