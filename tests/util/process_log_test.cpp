// What the debug log says of a process's environment: everything, less the secrets' values.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/process.h"

namespace fabuild {
namespace {

TEST(EnvironmentForLog, ShowsEachVariableButNotTheValuesOfSecrets) {
  const std::vector<std::string> env = {"MAX_JOBS=4",
                                        "FABUILD_CACHE_REMOTE_TOKEN=s3cr3t-bearer",
                                        "github_token=ghp_x",
                                        "AWS_SECRET_ACCESS_KEY=abc",
                                        "PIP_INDEX_PASSWORD=pw",
                                        "OPENAI_API_KEY=k",
                                        "PATH=/usr/bin:/bin",
                                        "KEYBOARD=us",
                                        "EMPTY_TOKEN=",
                                        "NO_EQUALS_TOKEN"};
  const std::string line = environment_for_log(env);
  EXPECT_EQ(line,
            "MAX_JOBS=4 FABUILD_CACHE_REMOTE_TOKEN=*** github_token=*** AWS_SECRET_ACCESS_KEY=*** "
            "PIP_INDEX_PASSWORD=*** OPENAI_API_KEY=*** PATH=/usr/bin:/bin KEYBOARD=us EMPTY_TOKEN=*** NO_EQUALS_TOKEN");
  for (const char* secret : {"s3cr3t", "ghp_x", "=abc", "=pw", "=k "}) {
    EXPECT_EQ(line.find(secret), std::string::npos) << secret;
  }
  EXPECT_EQ(environment_for_log({}), "");
}

}  // namespace
}  // namespace fabuild
