// Where the object cache's remote tier comes from (app/remote_cache.h): FABUILD_CACHE_REMOTE (a
// CI secret) over the matrix's cache.remote, each URL checked the same way; and what the push
// step sends: the objects of the tally it is handed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "../remote/remote_support.h"
#include "../support/scratch_dir.h"
#include "app/remote_cache.h"
#include "matrix/loader.h"
#include "remote/sync.h"
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
  const RemoteCacheSettings matrix = remote_cache_settings(spec, true, Environment{}, RealFiles());
  EXPECT_EQ(matrix.url, "https://cache.example.org/fa");
  EXPECT_THAT(matrix.from, HasSubstr("cache.remote in m.yaml"));
  EXPECT_EQ(matrix.token_env, "CACHE_TOKEN");
  const RemoteCacheSettings env =
      remote_cache_settings(spec, true, Environment{{"FABUILD_CACHE_REMOTE", "http://127.0.0.1:8080/c"}}, RealFiles());
  EXPECT_EQ(env.url, "http://127.0.0.1:8080/c");
  EXPECT_EQ(env.from, "FABUILD_CACHE_REMOTE");
  // Without the local object cache there is nothing to share.
  EXPECT_EQ(remote_cache_settings(spec, false, Environment{{"FABUILD_CACHE_REMOTE", "http://h/c"}}, RealFiles()).url,
            "");
  EXPECT_EQ(remote_cache_settings(from_matrix("{}"), true, Environment{}, RealFiles()).token_env,
            "FABUILD_CACHE_REMOTE_TOKEN");
}

TEST(RemoteCacheSettings, AUrlThatCannotServeTheCacheIsRefusedWhereverItComesFrom) {
  EXPECT_THAT(error_of("{remote: \"ftp://h/c\"}"), HasSubstr("is not an http://, https:// or redis:// URL"));
  EXPECT_THAT(error_of("{remote: \"https://user:secret@h/c\"}"), HasSubstr("holds credentials"));
  // A presigned URL signs one object; the cache is many (<url>/<key>).
  EXPECT_THAT(error_of("{remote: \"https://bucket.s3.example/c?X-Amz-Signature=abc\"}"),
              HasSubstr("has a query or fragment | each object is <url>/<key>: a presigned URL signs one object"));
  EXPECT_EQ(error_of("{remote: \"https://h/c/user@example\"}"), "no error");  // an @ in the path is no credential
  try {
    remote_cache_settings(from_matrix("{}"), true, Environment{{"FABUILD_CACHE_REMOTE", "https://h/c?sig=1"}},
                          RealFiles());
    ADD_FAILURE() << "a query in FABUILD_CACHE_REMOTE was taken";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("FABUILD_CACHE_REMOTE 'https://h/c?sig=1' has a query or fragment"));
    EXPECT_THAT(e.hint(), HasSubstr("or unset FABUILD_CACHE_REMOTE"));
  }
}

// A remote that keeps what it is sent in memory.
class MemoryStore : public remote::Store {
 public:
  Expected<std::optional<std::string>> get(const std::string& key) override {
    const auto it = objects.find(key);
    return it == objects.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  Expected<bool> has(const std::string& key) override { return objects.count(key) != 0; }
  Expected<void> put(const std::string& key, const std::string& bytes) override {
    objects[key] = bytes;
    return {};
  }
  [[nodiscard]] std::string where() const override { return "memory"; }
  std::map<std::string, std::string> objects;
};

// The push step takes the cell's tally as the object cache hands it (no tally file anywhere)
// and sends the objects its compiles stored or used, under the row's index for its writer.
TEST(RemoteCacheSteps, ThePushSendsTheObjectsOfTheTallyItIsHanded) {
  test::ScratchDir dir("remote-push-step");
  const objcache::Store local(dir.path() / "objects");
  CacheTally tally;
  tally.objects = remote::fill(local, 2);
  const std::string row(64, 'a');
  const auto store = std::make_shared<MemoryStore>();
  const Step push =
      remote_push_step(store, (dir.path() / "objects").string(), row, "cp312", std::make_shared<CellCompiles>(tally),
                       std::chrono::seconds(30), std::make_shared<RealFiles>(), nullptr);
  CellRun cell;
  cell.log_path = (dir.path() / "cell.log").string();
  Facts facts;
  StepContext ctx{cell, facts, {}};
  const StepResult pushed = push.run_inline(ctx);
  ASSERT_TRUE(pushed);
  const auto sent = nlohmann::json::parse(facts.at(kFactRemotePush));
  EXPECT_EQ(sent.value("objects", 0), 4) << "2 results and their 2 manifests";
  EXPECT_EQ(store->objects.count(remote::index_key(row, "cp312")), 1U);
  EXPECT_THAT(test::ScratchDir::read(cell.log_path), HasSubstr("remote cache memory: 4 objects sent"));
}

}  // namespace
}  // namespace fabuild
