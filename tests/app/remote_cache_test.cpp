// Where the object cache's remote tier comes from (app/remote_cache.h): FABUILD_CACHE_REMOTE (a
// CI secret) over the matrix's cache.remote, each URL checked the same way.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "app/remote_cache.h"
#include "matrix/loader.h"
#include "util/error.h"

namespace fabuild {
namespace {

using ::testing::HasSubstr;

CacheSpec from_matrix(const std::string& cache) {
  return parse_matrix(
             "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\ncache: " + cache + "\n",
             "m.yaml")
      .cache;
}

std::string error_of(const std::string& cache) {
  try {
    from_matrix(cache);
  } catch (const UserError& e) {
    return std::string(e.what()) + " | " + e.hint();
  }
  return "no error";
}

TEST(RemoteCacheSettings, TheEnvironmentWinsOverTheMatrixAndTheTokenVariableIsNamed) {
  const CacheSpec spec = from_matrix("{remote: \"https://cache.example.org/fa\", remote_token_env: CACHE_TOKEN}");
  const RemoteCacheSettings matrix = remote_cache_settings(spec, true, Environment{});
  EXPECT_EQ(matrix.url, "https://cache.example.org/fa");
  EXPECT_THAT(matrix.from, HasSubstr("cache.remote in m.yaml"));
  EXPECT_EQ(matrix.token_env, "CACHE_TOKEN");
  const RemoteCacheSettings env =
      remote_cache_settings(spec, true, Environment{{"FABUILD_CACHE_REMOTE", "http://127.0.0.1:8080/c"}});
  EXPECT_EQ(env.url, "http://127.0.0.1:8080/c");
  EXPECT_EQ(env.from, "FABUILD_CACHE_REMOTE");
  // Without the local object cache there is nothing to share.
  EXPECT_EQ(remote_cache_settings(spec, false, Environment{{"FABUILD_CACHE_REMOTE", "http://h/c"}}).url, "");
  EXPECT_EQ(remote_cache_settings(from_matrix("{}"), true, Environment{}).token_env, "FABUILD_CACHE_REMOTE_TOKEN");
}

TEST(RemoteCacheSettings, AUrlThatCannotServeTheCacheIsRefusedWhereverItComesFrom) {
  EXPECT_THAT(error_of("{remote: \"ftp://h/c\"}"), HasSubstr("is not an http://, https:// or redis:// URL"));
  EXPECT_THAT(error_of("{remote: \"https://user:secret@h/c\"}"), HasSubstr("holds credentials"));
  // A presigned URL signs one object; the cache is many (<url>/<key>).
  EXPECT_THAT(error_of("{remote: \"https://bucket.s3.example/c?X-Amz-Signature=abc\"}"),
              HasSubstr("has a query or fragment | each object is <url>/<key>: a presigned URL signs one object"));
  EXPECT_EQ(error_of("{remote: \"https://h/c/user@example\"}"), "no error");  // an @ in the path is no credential
  try {
    remote_cache_settings(from_matrix("{}"), true, Environment{{"FABUILD_CACHE_REMOTE", "https://h/c?sig=1"}});
    ADD_FAILURE() << "a query in FABUILD_CACHE_REMOTE was taken";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("FABUILD_CACHE_REMOTE 'https://h/c?sig=1' has a query or fragment"));
    EXPECT_THAT(e.hint(), HasSubstr("or unset FABUILD_CACHE_REMOTE"));
  }
}

}  // namespace
}  // namespace fabuild
