// The remote tier on Redis, against Debian's redis-server on 127.0.0.1
// (tests/support/redis_server.h): a row sent by one cache and taken by another, the password,
// and the faults that must only cost a local compile: a stopped server, an error reply, a server
// that does not answer in time, a tampered object, an object over the limit.

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "../support/redis_server.h"
#include "../support/scratch_dir.h"
#include "remote/store.h"
#include "remote/sync.h"
#include "remote_support.h"
#include "util/read_whole.h"

#if FABUILD_REDIS
#include <hiredis/hiredis.h>
#endif

namespace fabuild::remote {
namespace {

using namespace std::chrono_literals;

const std::string kRow(64, 'a');
const std::vector<std::string> kWriters = {"cp311", "cp312"};

TEST(RedisUrl, SaysWhatIsWrongWithIt) {
  const auto a = parse_redis_url("redis://cache.internal:6380/2");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->host, "cache.internal");
  EXPECT_EQ(a->port, 6380);
  EXPECT_EQ(a->db, 2);
  const auto d = parse_redis_url("redis://127.0.0.1");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->port, 6379);
  EXPECT_EQ(d->db, 0);
  EXPECT_NE(parse_redis_url("redis://h:99999").error().what.find("port"), std::string::npos);
  EXPECT_NE(parse_redis_url("redis://h/x").error().what.find("database"), std::string::npos);
  EXPECT_NE(parse_redis_url("redis://user:pw@h").error().what.find("credentials"), std::string::npos);
  EXPECT_NE(parse_redis_url("redis:///0").error().what.find("no host"), std::string::npos);
  EXPECT_FALSE(open_store("ftp://h/x", "").has_value());
}

#if FABUILD_REDIS

// A command of the test's own on the server (CLIENT PAUSE, CONFIG SET), as an operator would send it.
void admin(int port, const std::string& command) {
  redisContext* c = redisConnect("127.0.0.1", port);
  ASSERT_TRUE(c != nullptr && c->err == 0);
  freeReplyObject(redisCommand(c, "AUTH %s", test::RedisServer::kPassword));
  auto* r = static_cast<redisReply*>(redisCommand(c, command.c_str()));
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->type, REDIS_REPLY_ERROR) << command << ": " << std::string(r->str, r->len);
  freeReplyObject(r);
  redisFree(c);
}

class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::RedisServer::binary().empty()) GTEST_SKIP() << "redis-server is not installed (install-deps --tests)";
    ASSERT_TRUE(server_.start()) << read_whole(server_.log()).value_or("no log");
  }
  std::unique_ptr<Store> open(Limits limits = {}) {
    auto s = redis_store(server_.url(), test::RedisServer::kPassword, limits);
    EXPECT_TRUE(s.has_value());
    return std::move(*s);
  }
  test::ScratchDir scratch_{"fabuild-redis"};
  test::RedisServer server_{scratch_.path() / "redis"};
  objcache::Store a_{scratch_.path() / "runner-a"};
  objcache::Store b_{scratch_.path() / "runner-b"};
};

TEST_F(RedisTest, ARowSentByOneCacheIsTakenWholeByAnother) {
  auto store = open();
  EXPECT_EQ(store->get("cas/x").value(), std::nullopt);
  EXPECT_FALSE(store->has("cas/x").value());
  const auto used = fill(a_, 3);
  const SyncTally sent = push_row(*store, a_, kRow, "cp312", used, 30s);
  EXPECT_TRUE(sent.notes.empty()) << sent.notes.front();
  EXPECT_EQ(sent.objects, 6u);
  EXPECT_TRUE(b_.prepare());
  const SyncTally taken = fetch_row(*store, b_, kRow, kWriters, 30s);
  EXPECT_TRUE(taken.index_found);
  EXPECT_EQ(taken.objects, 6u);
  for (const auto& [manifest, result] : used)
    EXPECT_EQ(b_.result(result).result->object, a_.result(result).result->object);
  EXPECT_EQ(store->where(), server_.url());
}

TEST_F(RedisTest, WithoutThePasswordItIsANote) {
  auto store = redis_store(server_.url(), "wrong");
  ASSERT_TRUE(store.has_value());
  const auto got = (*store)->get("cas/x");
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.error().what.find("AUTH refused"), std::string::npos) << got.error().what;
  EXPECT_EQ(got.error().what.find("wrong"), std::string::npos);  // the password is never in a note
  auto none = redis_store(server_.url(), "");
  const auto put = (*none)->put("cas/x", "y");
  ASSERT_FALSE(put.has_value());
  EXPECT_NE(put.error().what.find("NOAUTH"), std::string::npos) << put.error().what;
}

TEST_F(RedisTest, AStoppedServerIsANoteNotAFailure) {
  server_.stop();
  auto store = open();
  const auto used = fill(a_, 1);
  const auto started = std::chrono::steady_clock::now();
  const SyncTally sent = push_row(*store, a_, kRow, "cp312", used, 30s);
  const SyncTally taken = fetch_row(*store, a_, kRow, kWriters, 30s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  ASSERT_EQ(sent.notes.size(), 1u);
  EXPECT_NE(sent.notes.front().find("cannot reach"), std::string::npos) << sent.notes.front();
  ASSERT_EQ(taken.notes.size(), 2u);  // two writers' indexes, then no further one is asked for
  EXPECT_TRUE(a_.result(used[0].second).result.has_value());
}

TEST_F(RedisTest, AnErrorReplyIsANoteNotAFailure) {
  auto store = open();
  admin(server_.port(), "CONFIG SET maxmemory-policy noeviction");
  admin(server_.port(), "CONFIG SET maxmemory 1");  // every write refused: OOM
  const auto used = fill(a_, 1);
  const SyncTally sent = push_row(*store, a_, kRow, "cp312", used, 30s);
  ASSERT_EQ(sent.notes.size(), 1u);
  EXPECT_NE(sent.notes.front().find("OOM"), std::string::npos) << sent.notes.front();
  EXPECT_EQ(sent.objects, 0u);
}

TEST_F(RedisTest, AServerThatDoesNotAnswerCostsAtMostTheTimeLimit) {
  Limits impatient;
  impatient.request = 1s;
  auto store = open(impatient);
  ASSERT_TRUE(store->has("cas/x").has_value());  // connected
  admin(server_.port(), "CLIENT PAUSE 5000 ALL");
  EXPECT_TRUE(b_.prepare());
  const auto started = std::chrono::steady_clock::now();
  const SyncTally taken = fetch_row(*store, b_, kRow, kWriters, 30s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s);
  EXPECT_FALSE(taken.index_found);
  ASSERT_EQ(taken.notes.size(), 2u);  // two writers' indexes, then no further one is asked for
}

TEST_F(RedisTest, ATamperedObjectIsRefusedAndAnObjectOverTheLimitNotTaken) {
  auto store = open();
  const auto used = fill(a_, 2);
  ASSERT_TRUE(push_row(*store, a_, kRow, "cp312", used, 30s).notes.empty());
  const std::string sha = hex(sha256_of(*read_whole(a_.result_path(used[0].second))));
  ASSERT_TRUE(store->put("cas/" + sha, "FABUILD-CC-RESULT 1\n0 0 0 tampered\n").has_value());
  EXPECT_TRUE(b_.prepare());
  const SyncTally taken = fetch_row(*store, b_, kRow, kWriters, 30s);
  EXPECT_EQ(taken.refused, 1u);
  EXPECT_EQ(taken.objects, 3u);
  EXPECT_FALSE(b_.result(used[0].second).result.has_value());

  Limits small;
  small.max_object_bytes = 4;
  auto tight = open(small);
  const auto big = tight->get("cas/" + sha);
  ASSERT_FALSE(big.has_value());
  EXPECT_NE(big.error().what.find("larger than the limit"), std::string::npos);
  EXPECT_FALSE(tight->put("cas/big", "12345").has_value());
}

#else

TEST(RedisTest, ABuildWithoutHiredisSaysSo) {
  const auto store = redis_store("redis://127.0.0.1:6379/0", "");
  ASSERT_FALSE(store.has_value());
  EXPECT_NE(store.error().what.find("without Redis"), std::string::npos);
}

#endif

}  // namespace
}  // namespace fabuild::remote
