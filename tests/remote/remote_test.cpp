// The remote tier against Debian's nginx with WebDAV PUT on 127.0.0.1 (tests/support/nginx.h):
// a row sent by one cache and taken by another, and the faults that must only cost a local
// compile: a stopped server, 500s, a slow server, a damaged or tampered object, a hostile index.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "../support/local_server.h"
#include "../support/nginx.h"
#include "../support/scratch_dir.h"
#include "objcache/probation.h"
#include "objcache/store.h"
#include "remote/guard.h"
#include "remote/store.h"
#include "remote/sync.h"
#include "remote_support.h"
#include "util/hash.h"
#include "util/read_whole.h"

namespace fabuild::remote {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kRow(64, 'a');
const std::vector<std::string> kWriters = {"cp311", "cp312", "cp313"};

std::string key_of(char c) { return std::string(64, c); }

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
  const SyncTally sent = push_row(*store, a_, kRow, "cp312", used, 30s);
  EXPECT_TRUE(sent.notes.empty()) << sent.notes.front();
  EXPECT_EQ(sent.objects, 6u);  // 3 results and 3 manifests

  EXPECT_TRUE(b_.prepare());
  const SyncTally taken = fetch_row(*store, b_, kRow, kWriters, 30s);
  EXPECT_TRUE(taken.index_found);
  EXPECT_EQ(taken.objects, 6u);
  EXPECT_EQ(taken.refused, 0u);
  for (const auto& [manifest, result] : used) {
    ASSERT_EQ(b_.manifest(manifest).entries.size(), 1u);
    EXPECT_EQ(b_.manifest(manifest).entries.front().result, result);
    EXPECT_EQ(b_.result(result).result->object, a_.result(result).result->object);
  }
  // What it took is on probation in b until a build proves it; a's cache put nothing there.
  EXPECT_EQ(objcache::Probation(b_, kRow).paths().size(), 6u);
  EXPECT_TRUE(objcache::Probation(a_, kRow).paths().empty());
  // Again: nothing to move either way.
  EXPECT_EQ(fetch_row(*store, b_, kRow, kWriters, 30s).already, 6u);
  const SyncTally again = push_row(*store, b_, kRow, "cp312", used, 30s);
  EXPECT_EQ(again.objects, 0u);
  EXPECT_EQ(again.already, 6u);
  // Another row knows none of it.
  EXPECT_FALSE(fetch_row(*store, b_, key_of('b'), kWriters, 30s).index_found);
}

TEST_F(RemoteTest, ADamagedOrTamperedObjectIsRefusedAndTheRestTaken) {
  auto store = http_store(server_.url("/cache"), "");
  const auto used = fill(a_, 2);
  ASSERT_TRUE(push_row(*store, a_, kRow, "cp312", used, 30s).notes.empty());
  // The server's copy of the first result, changed behind its name.
  const std::string sha = hex(sha256_of(*read_whole(a_.result_path(used[0].second))));
  std::ofstream(server_.data() / "cache" / "cas" / sha, std::ios::trunc) << "FABUILD-CC-RESULT 1\n0 0 0 tampered\n";
  EXPECT_TRUE(b_.prepare());
  const SyncTally taken = fetch_row(*store, b_, kRow, kWriters, 30s);
  EXPECT_EQ(taken.refused, 1u);
  EXPECT_EQ(taken.objects, 3u);
  ASSERT_FALSE(taken.notes.empty());
  EXPECT_NE(taken.notes.front().find("does not match its SHA-256"), std::string::npos);
  EXPECT_FALSE(b_.result(used[0].second).result.has_value());  // a miss: compiled locally
  EXPECT_TRUE(b_.result(used[1].second).result.has_value());
  ASSERT_EQ(taken.damaged, std::vector<std::string>{sha});

  // The push after the local compile sends the object again, though the remote has a copy under
  // its name; a later fetch then takes it.
  const std::set<std::string> damaged(taken.damaged.begin(), taken.damaged.end());
  const SyncTally repaired = push_row(*store, a_, kRow, "cp311", used, 30s, damaged);
  EXPECT_TRUE(repaired.notes.empty());
  EXPECT_EQ(repaired.repaired, 1u);
  EXPECT_EQ(hex(sha256_of(*read_whole(server_.data() / "cache" / "cas" / sha))), sha);
  test::ScratchDir later_dir{"remote-later"};
  const objcache::Store later(later_dir.path());
  EXPECT_TRUE(later.prepare());
  const SyncTally again = fetch_row(*store, later, kRow, kWriters, 30s);
  EXPECT_EQ(again.refused, 0u);
  EXPECT_TRUE(later.result(used[0].second).result.has_value());
}

// Two writers list the same result; one copy is damaged. The other serves it: the damaged copy
// counts as refused, but no note says a compile was lost.
TEST_F(RemoteTest, ADamagedCopyAnotherWriterServesCostsNoNote) {
  auto store = http_store(server_.url("/cache"), "");
  const auto used = fill(a_, 1);
  ASSERT_TRUE(push_row(*store, a_, kRow, "cp312", used, 30s).notes.empty());
  const std::string rel = a_.result_path(used[0].second).lexically_relative(a_.dir()).generic_string();
  const std::string bad(64, '0');  // sorts before any other digest: tried first
  ASSERT_TRUE(store->put("cas/" + bad, "not what its name says").has_value());
  const nlohmann::json other{{"version", 1}, {"objects", {{rel, bad}}}};
  ASSERT_TRUE(store->put(index_key(kRow, "cp311"), other.dump()).has_value());
  EXPECT_TRUE(b_.prepare());
  const SyncTally taken = fetch_row(*store, b_, kRow, kWriters, 30s);
  EXPECT_EQ(taken.refused, 1u);
  EXPECT_EQ(taken.damaged, std::vector<std::string>{bad});
  EXPECT_TRUE(taken.notes.empty()) << taken.notes.front();
  EXPECT_TRUE(b_.result(used[0].second).result.has_value());
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
  ASSERT_TRUE(store->put(index_key(kRow, "cp312"), index.dump()).has_value());
  EXPECT_TRUE(b_.prepare());
  const SyncTally taken = fetch_row(*store, b_, kRow, kWriters, 30s);
  EXPECT_EQ(taken.objects, 0u);
  EXPECT_EQ(taken.refused, 1u);  // the one well-formed path: its blob is not a manifest
  EXPECT_FALSE(fs::exists(scratch_.path() / "escaped"));
  EXPECT_FALSE(fs::exists(b_.dir() / "manifests" / "ab" / std::string(62, 'c')));
}

TEST_F(RemoteTest, AStoppedServerIsANoteNotAFailure) {
  auto store = http_store("http://127.0.0.1:" + std::to_string(test::Nginx::free_port()), "");
  const auto used = fill(a_, 1);
  const auto started = std::chrono::steady_clock::now();
  const SyncTally sent = push_row(*store, a_, kRow, "cp312", used, 30s);
  const SyncTally taken = fetch_row(*store, a_, kRow, kWriters, 30s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  ASSERT_EQ(sent.notes.size(), 1u);  // one try, then it stops asking
  EXPECT_EQ(sent.objects, 0u);
  EXPECT_FALSE(taken.index_found);
  ASSERT_EQ(taken.notes.size(), 2u);  // two writers' indexes, then it stops asking
  EXPECT_NE(taken.notes.front().find("127.0.0.1"), std::string::npos);
}

// Another store with its calls passed through: a test overrides the one it changes.
class Forwarding : public Store {
 public:
  explicit Forwarding(Store& inner) : inner_(inner) {}
  Expected<std::optional<std::string>> get(const std::string& key) override { return inner_.get(key); }
  Expected<bool> has(const std::string& key) override { return inner_.has(key); }
  Expected<void> put(const std::string& key, const std::string& bytes) override { return inner_.put(key, bytes); }
  [[nodiscard]] std::string where() const override { return inner_.where(); }

 private:
  Store& inner_;
};

// The remote, but one key's GET fails as a 500 or a timeout would.
class OneKeyFails : public Forwarding {
 public:
  OneKeyFails(Store& inner, std::string key) : Forwarding(inner), key_(std::move(key)) {}
  Expected<std::optional<std::string>> get(const std::string& key) override {
    if (key == key_) return fail("GET " + key + ": HTTP 500");
    return Forwarding::get(key);
  }

 private:
  std::string key_;
};

// One writer's index not answering costs that writer's objects, not those of the writers after
// it (a finishing job once compiled a whole share again for one failed GET).
TEST_F(RemoteTest, OneIndexNotAnsweringLosesOnlyItsWritersObjects) {
  auto store = http_store(server_.url("/cache"), "");
  const auto used = fill(a_, 3);
  ASSERT_TRUE(push_row(*store, a_, kRow, "cp311", {used[0]}, 30s).notes.empty());
  ASSERT_TRUE(push_row(*store, a_, kRow, "cp312", {used[1]}, 30s).notes.empty());
  ASSERT_TRUE(push_row(*store, a_, kRow, "cp313", {used[2]}, 30s).notes.empty());
  OneKeyFails flaky(*store, index_key(kRow, "cp311"));
  EXPECT_TRUE(b_.prepare());
  const SyncTally taken = fetch_row(flaky, b_, kRow, kWriters, 30s);
  ASSERT_EQ(taken.notes.size(), 1u);
  EXPECT_NE(taken.notes.front().find("HTTP 500"), std::string::npos);
  EXPECT_FALSE(b_.result(used[0].second).result.has_value());
  EXPECT_TRUE(b_.result(used[1].second).result.has_value());
  EXPECT_TRUE(b_.result(used[2].second).result.has_value());
}

TEST_F(RemoteTest, A500IsANoteNotAFailure) {
  auto store = http_store(server_.url("/fail"), "");
  const auto used = fill(a_, 1);
  const SyncTally sent = push_row(*store, a_, kRow, "cp312", used, 30s);
  ASSERT_EQ(sent.notes.size(), 1u);
  EXPECT_NE(sent.notes.front().find("HTTP 500"), std::string::npos);
  const SyncTally taken = fetch_row(*store, a_, kRow, kWriters, 30s);
  EXPECT_FALSE(taken.index_found);
  EXPECT_NE(taken.notes.front().find("HTTP 500"), std::string::npos);
  EXPECT_TRUE(a_.result(used[0].second).result.has_value());  // the local cache is untouched
}

TEST_F(RemoteTest, ASlowServerCostsAtMostTheTimeLimit) {
  auto fast = http_store(server_.url("/cache"), "");
  const auto used = fill(a_, 2);
  ASSERT_TRUE(push_row(*fast, a_, kRow, "cp312", used, 30s).notes.empty());
  Limits impatient;
  impatient.request = 1s;
  auto slow = http_store(server_.url("/slow/cache"), "", impatient);  // 1 byte a second
  EXPECT_TRUE(b_.prepare());
  const auto started = std::chrono::steady_clock::now();
  const SyncTally taken = fetch_row(*slow, b_, kRow, kWriters, 30s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_FALSE(taken.index_found);
  ASSERT_FALSE(taken.notes.empty());
  EXPECT_NE(taken.notes.front().find("imed out"), std::string::npos) << taken.notes.front();
}

// A server that accepts and then says nothing, or drips its answer, is given up after the stall
// limit (seconds), not after the whole request limit (a minute).
TEST_F(RemoteTest, AServerThatHangsAfterAcceptingCostsTheStallLimit) {
  test::SilentListener silent;
  Limits limits;
  limits.stall = 1s;
  for (const std::string& url : {silent.url("/cache"), server_.url("/slow/cache")}) {
    auto store = http_store(url, "", limits);
    const auto started = std::chrono::steady_clock::now();
    const auto got = store->get("cas/x");
    EXPECT_LT(std::chrono::steady_clock::now() - started, 10s) << url;
    ASSERT_FALSE(got.has_value()) << url;
    EXPECT_NE(got.error().what.find("127.0.0.1"), std::string::npos) << got.error().what;
  }
}

// A remote that hangs costs a run its failures until the guard drops it: three requests, then
// none, and every later cell compiles without asking.
TEST_F(RemoteTest, AHangingRemoteIsDroppedForTheRunAfterThreeFailures) {
  test::SilentListener silent;
  Limits limits;
  limits.stall = 1s;
  GuardedStore guarded(http_store(silent.url("/cache"), "", limits), GuardLimits{});
  const auto started = std::chrono::steady_clock::now();
  for (int cell = 0; cell < 20; ++cell) {
    EXPECT_TRUE(b_.prepare());
    (void)fetch_row(guarded, b_, kRow, kWriters, 30s);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 15s);
  EXPECT_TRUE(guarded.dropped());
  const auto after = guarded.get("cas/x");
  ASSERT_FALSE(after.has_value());
  EXPECT_TRUE(is_dropped_note(after.error().what)) << after.error().what;
}

TEST_F(RemoteTest, TheBudgetStopsALongFetch) {
  auto store = http_store(server_.url("/cache"), "");
  ASSERT_TRUE(push_row(*store, a_, kRow, "cp312", fill(a_, 3), 30s).notes.empty());
  EXPECT_TRUE(b_.prepare());
  const SyncTally taken = fetch_row(*store, b_, kRow, kWriters, 0ms);
  EXPECT_EQ(taken.objects, 0u);
  ASSERT_EQ(taken.notes.size(), 1u);
  EXPECT_NE(taken.notes.front().find("6 of 6 objects not tried"), std::string::npos) << taken.notes.front();
}

// Holds every index read until `parties` readers have read theirs: the interleaving of two jobs
// of one row that both read the row's index before either writes.
class ReadersMeet : public Forwarding {
 public:
  ReadersMeet(Store& inner, int parties) : Forwarding(inner), parties_(parties) {}
  Expected<std::optional<std::string>> get(const std::string& key) override {
    auto got = Forwarding::get(key);
    if (key.starts_with("ac/")) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++arrived_;
      met_.notify_all();
      met_.wait_for(lock, 10s, [this] { return arrived_ >= parties_; });
    }
    return got;
  }

 private:
  const int parties_;
  std::mutex mutex_;
  std::condition_variable met_;
  int arrived_ = 0;
};

TEST_F(RemoteTest, TwoJobsOfOneRowSendingAtOnceLoseNothing) {
  // Two runners build the row's cp311 and cp312 cells at the same time (--split-rows): each
  // reads the row before the other writes. Each keeps an index of its own, so neither write
  // hides the other's objects.
  auto store = http_store(server_.url("/cache"), "");
  objcache::Store c{scratch_.path() / "runner-c"};
  const auto used_a = fill(a_, 2);
  EXPECT_TRUE(c.prepare());
  std::vector<std::pair<std::string, std::string>> used_c;
  {
    const std::string manifest = hex(sha256_of("only c's"));
    const std::string result = hex(sha256_of("only c's result"));
    EXPECT_TRUE(c.put_result(result, objcache::Result{"c's object", "", ""}));
    objcache::ManifestEntry e;
    e.result = result;
    e.deps = {{"/src/api.cpp", std::string(64, '0')}};
    EXPECT_TRUE(c.add_to_manifest(manifest, e));
    used_c.emplace_back(manifest, result);
  }
  ReadersMeet meeting(*store, 2);
  SyncTally sent_a, sent_c;
  std::thread job_a([&] { sent_a = push_row(meeting, a_, kRow, "cp311", used_a, 30s); });
  std::thread job_c([&] { sent_c = push_row(meeting, c, kRow, "cp312", used_c, 30s); });
  job_a.join();
  job_c.join();
  ASSERT_TRUE(sent_a.notes.empty()) << sent_a.notes.front();
  ASSERT_TRUE(sent_c.notes.empty()) << sent_c.notes.front();
  EXPECT_TRUE(b_.prepare());
  const SyncTally taken = fetch_row(*store, b_, kRow, kWriters, 30s);
  EXPECT_EQ(taken.objects, 6u);  // a's 2 results and 2 manifests, c's 1 and 1
  EXPECT_TRUE(b_.result(used_a[1].second).result.has_value());
  EXPECT_TRUE(b_.result(used_c[0].second).result.has_value());
}

}  // namespace
}  // namespace fabuild::remote
