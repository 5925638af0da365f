// Who writes the remote and which indexes a run believes (app/remote_trust.h): each CI
// provider's rule, the overrides, the keys, and the plan's words for them.

#include "app/remote_trust.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/fake_files.h"
#include "matrix/loader.h"
#include "util/error.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CacheSpec cache(const std::string& yaml = "{remote: \"http://127.0.0.1:1/c\"}") {
  return parse_matrix(
             "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\ncache: " + yaml + "\n",
             "m.yaml")
      .cache;
}

const test::FakeFiles kNoFiles;

WriteDecision decide(const Environment& env, const Files& files = kNoFiles, const CacheSpec& spec = cache()) {
  return remote_write_decision(spec, env, files);
}

TEST(RemoteWrite, OnGitHubOnlyScheduledManualAndDefaultBranchPushRunsWrite) {
  const auto gh = [](const std::string& event) {
    return Environment{{"GITHUB_ACTIONS", "true"}, {"GITHUB_EVENT_NAME", event}, {"GITHUB_REF", "refs/heads/main"}};
  };
  EXPECT_TRUE(decide(gh("schedule")).write);
  EXPECT_TRUE(decide(gh("workflow_dispatch")).write);
  for (const char* event : {"pull_request", "pull_request_target", "merge_group", "issue_comment"}) {
    const WriteDecision d = decide(gh(event));
    EXPECT_FALSE(d.write) << event;
    EXPECT_THAT(d.why, HasSubstr(std::string("read-only: untrusted, a ") + event + " run on GitHub Actions"));
  }
  // A push: the default branch comes from the event payload.
  test::FakeFiles files;
  files.add_file("/gh/event.json", R"({"repository": {"default_branch": "main"}})");
  Environment push = gh("push");
  push.set("GITHUB_EVENT_PATH", "/gh/event.json");
  EXPECT_TRUE(decide(push, files).write);
  EXPECT_THAT(decide(push, files).why, HasSubstr("to the default branch main"));
  push.set("GITHUB_REF", "refs/heads/feature");
  EXPECT_FALSE(decide(push, files).write);
  EXPECT_THAT(decide(push, files).why, HasSubstr("to refs/heads/feature, not the default branch main"));
  push.set("GITHUB_EVENT_PATH", "/gh/missing.json");
  EXPECT_FALSE(decide(push, files).write);
  EXPECT_THAT(decide(push, files).why,
              HasSubstr(", to refs/heads/feature: the event payload (GITHUB_EVENT_PATH) names no default branch to "
                        "compare it with"));
  // Neither a payload nor a ref: the line says so, with no blank where the ref would be.
  const WriteDecision bare = decide(Environment{{"GITHUB_ACTIONS", "true"}, {"GITHUB_EVENT_NAME", "push"}});
  EXPECT_FALSE(bare.write);
  EXPECT_THAT(bare.why, HasSubstr("a push run on GitHub Actions (GITHUB_EVENT_NAME), to a ref GITHUB_REF does not "
                                  "name: no event payload (GITHUB_EVENT_PATH unset) names the default branch to "
                                  "compare it with"));
  EXPECT_THAT(bare.why, Not(HasSubstr("  ")));
}

TEST(RemoteWrite, GitLabAndBuildkiteHaveTheirOwnRules) {
  Environment gl{{"GITLAB_CI", "true"}, {"CI_PIPELINE_SOURCE", "schedule"}, {"CI_COMMIT_REF_PROTECTED", "true"}};
  EXPECT_TRUE(decide(gl).write);
  gl.set("CI_PIPELINE_SOURCE", "merge_request_event");
  EXPECT_FALSE(decide(gl).write);
  gl.set("CI_PIPELINE_SOURCE", "push");
  gl.set("CI_COMMIT_REF_PROTECTED", "false");
  EXPECT_FALSE(decide(gl).write);

  Environment bk{{"BUILDKITE", "true"},
                 {"BUILDKITE_PULL_REQUEST", "false"},
                 {"BUILDKITE_BRANCH", "main"},
                 {"BUILDKITE_PIPELINE_DEFAULT_BRANCH", "main"}};
  EXPECT_TRUE(decide(bk).write);
  bk.set("BUILDKITE_PULL_REQUEST", "42");
  EXPECT_FALSE(decide(bk).write);
  EXPECT_THAT(decide(bk).why, HasSubstr("pull request 42"));
}

TEST(RemoteWrite, OutsideCiARunWritesAndTheSettingOverridesTheRule) {
  EXPECT_TRUE(decide(Environment{}).write);
  EXPECT_THAT(decide(Environment{}).why, HasSubstr("a run outside CI"));
  const CacheSpec off = cache("{remote: \"http://127.0.0.1:1/c\", remote_write: false}");
  EXPECT_FALSE(decide(Environment{}, kNoFiles, off).write);
  EXPECT_THAT(decide(Environment{}, kNoFiles, off).why, HasSubstr("cache.remote_write in m.yaml:5"));
  const Environment pr{{"GITHUB_ACTIONS", "true"}, {"GITHUB_EVENT_NAME", "pull_request"}};
  Environment forced = pr;
  forced.set(kRemoteWriteEnv, "true");
  EXPECT_TRUE(decide(forced).write);
  forced.set(kRemoteWriteEnv, "maybe");
  EXPECT_THROW(decide(forced), UserError);
  try {
    cache("{remote: \"http://h/c\", remote_write: sometimes}");
    ADD_FAILURE() << "a bad remote_write was taken";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cache.remote_write must be auto, true or false, not 'sometimes'"));
  }
}

const char* kPrivate =
    "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIHhyeiNe1RXmxuebwK7kuRAcR9376xyR3BXmVbzfEHAm\n"
    "-----END PRIVATE KEY-----\n";
const char* kPublic = "MCowBQYDK2VwAyEASVwE0yhv8efHWK3S9naXdxqjXg5kyEUcVDorVt0vKuE=";
const char* kOtherPublic = "MCowBQYDK2VwAyEAKYw9WcDDj7+nQzGT38cKIpX5LPaF2iUS8F908k0StWI=";

TEST(IndexTrust, KeysComeFromTheMatrixAndTheirVariablesAndOnlyAWriterSigns) {
  const CacheSpec spec = cache(std::string("{remote: \"http://h/c\", verify_keys: [\"") + kPublic + "\"]}");
  const Environment env{{kDefaultSigningKeyEnv, kPrivate}, {kDefaultVerifyKeysEnv, kOtherPublic}};
  const remote::IndexTrust writer = index_trust(spec, true, env);
  ASSERT_TRUE(writer.signer.has_value());
  EXPECT_EQ(writer.accepted.size(), 2u) << "its own key, once, and the variable's";
  EXPECT_THAT(describe_trust(writer), HasSubstr("indexes signed by key " + writer.signer->pub.id));
  const remote::IndexTrust reader = index_trust(spec, false, env);
  EXPECT_FALSE(reader.signer.has_value()) << "a read-only run signs nothing";
  EXPECT_TRUE(reader.verifying());
  EXPECT_THAT(describe_trust(index_trust(cache(), true, Environment{})),
              HasSubstr("row indexes are not signed: every writer of the remote is believed"));
  try {
    index_trust(cache(), true, Environment{{kDefaultSigningKeyEnv, "not a key"}});
    ADD_FAILURE() << "a bad signing key was taken";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("$FABUILD_CACHE_SIGNING_KEY is not a PEM private key"));
  }
  EXPECT_THROW(index_trust(cache("{remote: \"http://h/c\", verify_keys: [\"AAAA\"]}"), false, Environment{}),
               UserError);
}

}  // namespace
}  // namespace fabuild
