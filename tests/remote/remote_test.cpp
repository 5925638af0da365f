// The remote tier against Debian's nginx with WebDAV PUT on 127.0.0.1 (tests/support/nginx.h):
// a row sent by one cache and taken by another, and the faults that must only cost a local
// compile: a stopped server, 500s, a slow server, a damaged or tampered object, a hostile index.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../support/nginx.h"
#include "../support/scratch_dir.h"
#include "objcache/store.h"
#include "remote/store.h"
#include "remote/sync.h"
#include "util/hash.h"
#include "util/read_whole.h"

namespace fabuild::remote {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kRow(64, 'a');

std::string key_of(char c) { return std::string(64, c); }

// A local cache holding `n` compiled objects, as fabuild-cc leaves them; returns their keys.
std::vector<std::pair<std::string, std::string>> fill(const objcache::Store& store, int n) {
  store.prepare();
  std::vector<std::pair<std::string, std::string>> used;
  for (int i = 0; i < n; ++i) {
    const std::string manifest = hex(sha256_of("manifest" + std::to_string(i)));
    const std::string result = hex(sha256_of("result" + std::to_string(i)));
    store.put_result(result, objcache::Result{"object bytes " + std::to_string(i), "", "warning " + std::to_string(i)});
    objcache::ManifestEntry e;
    e.result = result;
    e.deps = {{"/src/k" + std::to_string(i) + ".cu", std::string(64, '0')}};
    store.add_to_manifest(manifest, e);
    used.emplace_back(manifest, result);
  }
  return used;
}

class RemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::Nginx::binary().empty()) GTEST_SKIP() << "nginx is not installed (scripts/install-deps.sh --tests)";
    ASSERT_TRUE(server_.start()) << read_whole(server_.error_log()).value_or("no error log");
  }
  test::ScratchDir scratch_{"fabuild-remote"};
  test::Nginx server_{scratch_.path() / "nginx"};
  objcache::Store a_{scratch_.path() / "runner-a"};
  objcache::Store b_{scratch_.path() / "runner-b"};
};

TEST_F(RemoteTest, HttpGetHeadPutAgainstNginx) {
  auto store = http_store(server_.url("/cache/"), "");
  EXPECT_EQ(store->get("cas/x").value(), std::nullopt);
  EXPECT_FALSE(store->has("cas/x").value());
  ASSERT_TRUE(store->put("cas/x", "hello").has_value());
  EXPECT_TRUE(store->has("cas/x").value());
  EXPECT_EQ(store->get("cas/x").value(), std::optional<std::string>("hello"));
  EXPECT_EQ(store->where(), server_.url("/cache"));
}

TEST_F(RemoteTest, TheBearerTokenIsSent) {
  const auto without = http_store(server_.url("/auth/cache"), "")->put("cas/t", "x");
  ASSERT_FALSE(without.has_value());
  EXPECT_NE(without.error().what.find("HTTP 401"), std::string::npos);
  EXPECT_EQ(without.error().what.find("s3cret"), std::string::npos);
  auto store = http_store(server_.url("/auth/cache"), "s3cret");
  ASSERT_TRUE(store->put("cas/t", "x").has_value()) << store->put("cas/t", "x").error().what;
  EXPECT_EQ(store->get("cas/t").value(), std::optional<std::string>("x"));
}

TEST_F(RemoteTest, AnObjectOverTheLimitIsNeitherSentNorTaken) {
  Limits small;
  small.max_object_bytes = 4;
  auto store = http_store(server_.url("/cache"), "", small);
  const auto put = store->put("cas/big", "12345");
  ASSERT_FALSE(put.has_value());
  EXPECT_NE(put.error().what.find("over the limit"), std::string::npos);
  ASSERT_TRUE(http_store(server_.url("/cache"), "")->put("cas/big", "12345").has_value());
  const auto got = store->get("cas/big");
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.error().what.find("larger than the limit"), std::string::npos);
}

TEST_F(RemoteTest, ARowSentByOneCacheIsTakenWholeByAnother) {
  auto store = http_store(server_.url("/cache"), "");
  const auto used = fill(a_, 3);
  const SyncTally sent = push_row(*store, a_, kRow, used, 30s);
  EXPECT_TRUE(sent.notes.empty()) << sent.notes.front();
  EXPECT_EQ(sent.objects, 6u);  // 3 results and 3 manifests

  b_.prepare();
  const SyncTally taken = fetch_row(*store, b_, kRow, 30s);
  EXPECT_TRUE(taken.index_found);
  EXPECT_EQ(taken.objects, 6u);
  EXPECT_EQ(taken.refused, 0u);
  for (const auto& [manifest, result] : used) {
    ASSERT_EQ(b_.manifest(manifest).size(), 1u);
    EXPECT_EQ(b_.manifest(manifest).front().result, result);
    EXPECT_EQ(b_.result(result)->object, a_.result(result)->object);
  }
  // Again: nothing to move either way.
  EXPECT_EQ(fetch_row(*store, b_, kRow, 30s).already, 6u);
  const SyncTally again = push_row(*store, b_, kRow, used, 30s);
  EXPECT_EQ(again.objects, 0u);
  EXPECT_EQ(again.already, 6u);
  // Another row knows none of it.
  EXPECT_FALSE(fetch_row(*store, b_, key_of('b'), 30s).index_found);
}

TEST_F(RemoteTest, ADamagedOrTamperedObjectIsRefusedAndTheRestTaken) {
  auto store = http_store(server_.url("/cache"), "");
  const auto used = fill(a_, 2);
  ASSERT_TRUE(push_row(*store, a_, kRow, used, 30s).notes.empty());
  // The server's copy of the first result, changed behind its name.
  const std::string sha = hex(sha256_of(*read_whole(a_.result_path(used[0].second))));
  std::ofstream(server_.data() / "cache" / "cas" / sha, std::ios::trunc) << "FABUILD-CC-RESULT 1\n0 0 0 tampered\n";
  b_.prepare();
  const SyncTally taken = fetch_row(*store, b_, kRow, 30s);
  EXPECT_EQ(taken.refused, 1u);
  EXPECT_EQ(taken.objects, 3u);
  ASSERT_FALSE(taken.notes.empty());
  EXPECT_NE(taken.notes.front().find("does not match its SHA-256"), std::string::npos);
  EXPECT_FALSE(b_.result(used[0].second).has_value());  // a miss: compiled locally
  EXPECT_TRUE(b_.result(used[1].second).has_value());
}

TEST_F(RemoteTest, AHostileIndexCannotWriteOutsideTheCache) {
  auto store = http_store(server_.url("/cache"), "");
  const std::string evil = "not a manifest";
  const std::string sha = hex(sha256_of(evil));
  ASSERT_TRUE(store->put("cas/" + sha, evil).has_value());
  const nlohmann::json index{{"version", 1},
                             {"objects",
                              {{"../../escaped", sha},
                               {"manifests/ab/" + std::string(62, 'c'), sha},
                               {"results/zz/" + std::string(62, 'c'), sha}}}};
  ASSERT_TRUE(store->put("ac/" + kRow, index.dump()).has_value());
  b_.prepare();
  const SyncTally taken = fetch_row(*store, b_, kRow, 30s);
  EXPECT_EQ(taken.objects, 0u);
  EXPECT_EQ(taken.refused, 1u);  // the one well-formed path: its blob is not a manifest
  EXPECT_FALSE(fs::exists(scratch_.path() / "escaped"));
  EXPECT_FALSE(fs::exists(b_.dir() / "manifests" / "ab" / std::string(62, 'c')));
}

TEST_F(RemoteTest, AStoppedServerIsANoteNotAFailure) {
  auto store = http_store("http://127.0.0.1:" + std::to_string(test::Nginx::free_port()), "");
  const auto used = fill(a_, 1);
  const auto started = std::chrono::steady_clock::now();
  const SyncTally sent = push_row(*store, a_, kRow, used, 30s);
  const SyncTally taken = fetch_row(*store, a_, kRow, 30s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  ASSERT_EQ(sent.notes.size(), 1u);  // one try, then it stops asking
  EXPECT_EQ(sent.objects, 0u);
  EXPECT_FALSE(taken.index_found);
  ASSERT_EQ(taken.notes.size(), 1u);
  EXPECT_NE(taken.notes.front().find("127.0.0.1"), std::string::npos);
}

TEST_F(RemoteTest, A500IsANoteNotAFailure) {
  auto store = http_store(server_.url("/fail"), "");
  const auto used = fill(a_, 1);
  const SyncTally sent = push_row(*store, a_, kRow, used, 30s);
  ASSERT_EQ(sent.notes.size(), 1u);
  EXPECT_NE(sent.notes.front().find("HTTP 500"), std::string::npos);
  const SyncTally taken = fetch_row(*store, a_, kRow, 30s);
  EXPECT_FALSE(taken.index_found);
  EXPECT_NE(taken.notes.front().find("HTTP 500"), std::string::npos);
  EXPECT_TRUE(a_.result(used[0].second).has_value());  // the local cache is untouched
}

TEST_F(RemoteTest, ASlowServerCostsAtMostTheTimeLimit) {
  auto fast = http_store(server_.url("/cache"), "");
  const auto used = fill(a_, 2);
  ASSERT_TRUE(push_row(*fast, a_, kRow, used, 30s).notes.empty());
  Limits impatient;
  impatient.request = 1s;
  auto slow = http_store(server_.url("/slow/cache"), "", impatient);  // 1 byte a second
  b_.prepare();
  const auto started = std::chrono::steady_clock::now();
  const SyncTally taken = fetch_row(*slow, b_, kRow, 30s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_FALSE(taken.index_found);
  ASSERT_FALSE(taken.notes.empty());
  EXPECT_NE(taken.notes.front().find("imed out"), std::string::npos) << taken.notes.front();
}

TEST_F(RemoteTest, TheBudgetStopsALongFetch) {
  auto store = http_store(server_.url("/cache"), "");
  ASSERT_TRUE(push_row(*store, a_, kRow, fill(a_, 3), 30s).notes.empty());
  b_.prepare();
  const SyncTally taken = fetch_row(*store, b_, kRow, 0ms);
  EXPECT_EQ(taken.objects, 0u);
  ASSERT_EQ(taken.notes.size(), 1u);
  EXPECT_NE(taken.notes.front().find("6 of 6 objects not tried"), std::string::npos) << taken.notes.front();
}

}  // namespace
}  // namespace fabuild::remote
