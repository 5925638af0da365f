// The remote tier on Redis (redis://host[:port][/db]) through hiredis, Debian's and Ubuntu's
// libhiredis-dev: GET, EXISTS and SET of the same keys as over HTTP (remote/store.h). A build
// of fabuild without hiredis (a Windows build) says so when a redis:// URL is given.

#include <fmt/format.h>

#include <charconv>
#include <mutex>

#include "remote/store.h"

#if FABUILD_REDIS
#include <hiredis/hiredis.h>
#include <sys/time.h>
#endif

namespace fabuild::remote {

Expected<RedisAddress> parse_redis_url(const std::string& url) {
  constexpr std::string_view kScheme = "redis://";
  if (!url.starts_with(kScheme)) return fail(fmt::format("'{}' is not a redis:// URL", url));
  std::string rest = url.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('@') != std::string::npos) {
    return fail(fmt::format("'{}' holds credentials", url),
                "put the password in the variable cache.remote_token_env names (FABUILD_CACHE_REMOTE_TOKEN)");
  }
  RedisAddress a;
  const auto slash = rest.find('/');
  std::string host_port = rest.substr(0, slash);
  if (slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    const auto [end, ec] = std::from_chars(db.data(), db.data() + db.size(), a.db);
    if (ec != std::errc() || end != db.data() + db.size() || a.db < 0) {
      return fail(fmt::format("'{}': the database after the host is not a number ('{}')", url, db));
    }
  }
  if (const auto colon = host_port.rfind(':'); colon != std::string::npos) {
    const std::string port = host_port.substr(colon + 1);
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
    if (ec != std::errc() || end != port.data() + port.size() || a.port <= 0 || a.port > 65535) {
      return fail(fmt::format("'{}': the port is not a number from 1 to 65535 ('{}')", url, port));
    }
    host_port.resize(colon);
  }
  if (host_port.empty()) return fail(fmt::format("'{}' names no host", url), "e.g. redis://127.0.0.1:6379/0");
  a.host = host_port;
  return a;
}

#if FABUILD_REDIS

namespace {

using Reply = std::unique_ptr<redisReply, decltype(&freeReplyObject)>;

timeval as_timeval(std::chrono::milliseconds ms) {
  return timeval{static_cast<time_t>(ms.count() / 1000), static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

// One connection, made when first needed and again after a failure; calls from several cells'
// steps at once take turns on it.
class RedisStore final : public Store {
 public:
  RedisStore(RedisAddress address, std::string password, Limits limits)
      : address_(std::move(address)), password_(std::move(password)), limits_(limits) {}
  ~RedisStore() override { disconnect(); }
  RedisStore(const RedisStore&) = delete;
  RedisStore& operator=(const RedisStore&) = delete;

  Expected<std::optional<std::string>> get(const std::string& key) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    // The size first, so that an object over the limit is never transferred.
    auto size = command("STRLEN", key, {});
    if (!size) return tl::make_unexpected(size.error());
    if ((*size)->type != REDIS_REPLY_INTEGER) return unexpected_reply("STRLEN", key);
    if (static_cast<std::uint64_t>((*size)->integer) > limits_.max_object_bytes) {
      return fail(fmt::format("GET {}/{}: larger than the limit of {} bytes", where(), key, limits_.max_object_bytes));
    }
    auto r = command("GET", key, {});
    if (!r) return tl::make_unexpected(r.error());
    if ((*r)->type == REDIS_REPLY_NIL) return std::optional<std::string>{};
    if ((*r)->type != REDIS_REPLY_STRING) return unexpected_reply("GET", key);
    return std::optional<std::string>{std::string((*r)->str, (*r)->len)};
  }

  Expected<bool> has(const std::string& key) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto r = command("EXISTS", key, {});
    if (!r) return tl::make_unexpected(r.error());
    if ((*r)->type != REDIS_REPLY_INTEGER) return unexpected_reply("EXISTS", key);
    return (*r)->integer > 0;
  }

  Expected<void> put(const std::string& key, const std::string& bytes) override {
    if (bytes.size() > limits_.max_object_bytes) {
      return fail(fmt::format("SET {}/{}: {} bytes, over the limit of {}", where(), key, bytes.size(),
                              limits_.max_object_bytes));
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    auto r = command("SET", key, bytes);
    if (!r) return tl::make_unexpected(r.error());
    if ((*r)->type != REDIS_REPLY_STATUS) return unexpected_reply("SET", key);
    return {};
  }

  [[nodiscard]] std::string where() const override {
    return fmt::format("redis://{}:{}/{}", address_.host, address_.port, address_.db);
  }

 private:
  Expected<void> connect() {
    if (context_ != nullptr) return {};
    context_ = redisConnectWithTimeout(address_.host.c_str(), address_.port, as_timeval(limits_.connect));
    if (context_ == nullptr || context_->err != 0) {
      const std::string why = context_ != nullptr ? context_->errstr : "out of memory";
      disconnect();
      return fail(fmt::format("cannot reach {}: {}", where(), why));
    }
    redisSetTimeout(context_, as_timeval(limits_.request));
    if (!password_.empty()) {
      Reply auth(static_cast<redisReply*>(redisCommand(context_, "AUTH %b", password_.data(), password_.size())),
                 freeReplyObject);
      if (!auth || auth->type == REDIS_REPLY_ERROR) {
        const std::string why = auth ? std::string(auth->str, auth->len) : context_->errstr;
        disconnect();
        return fail(fmt::format("{}: AUTH refused: {}", where(), why));
      }
    }
    if (address_.db != 0) {
      Reply select(static_cast<redisReply*>(redisCommand(context_, "SELECT %d", address_.db)), freeReplyObject);
      if (!select || select->type == REDIS_REPLY_ERROR) {
        const std::string why = select ? std::string(select->str, select->len) : context_->errstr;
        disconnect();
        return fail(fmt::format("{}: SELECT {} refused: {}", where(), address_.db, why));
      }
    }
    return {};
  }

  void disconnect() {
    if (context_ != nullptr) redisFree(context_);
    context_ = nullptr;
  }

  // `verb` with the key and, for SET, the value; the reply, or a Failure (the connection is
  // dropped, so the next call connects afresh).
  Expected<Reply> command(const char* verb, const std::string& key, const std::string& value) {
    if (const auto up = connect(); !up) return tl::make_unexpected(up.error());
    const std::string verb_s(verb);
    redisReply* raw =
        verb_s == "SET"
            ? static_cast<redisReply*>(
                  redisCommand(context_, "SET %b %b", key.data(), key.size(), value.data(), value.size()))
            : static_cast<redisReply*>(redisCommand(context_, (verb_s + " %b").c_str(), key.data(), key.size()));
    if (raw == nullptr) {
      const std::string why = context_->err == REDIS_ERR_IO && context_->errstr[0] == '\0'
                                  ? std::string("timed out or the connection closed")
                                  : std::string(context_->errstr);
      disconnect();
      return fail(fmt::format("{} {}/{}: {}", verb, where(), key, why));
    }
    Reply reply(raw, freeReplyObject);
    if (reply->type == REDIS_REPLY_ERROR) {
      return fail(fmt::format("{} {}/{}: {}", verb, where(), key, std::string(reply->str, reply->len)));
    }
    return reply;
  }

  tl::unexpected<Failure> unexpected_reply(const char* verb, const std::string& key) const {
    return fail(fmt::format("{} {}/{}: an unexpected reply", verb, where(), key));
  }

  RedisAddress address_;
  std::string password_;
  Limits limits_;
  std::mutex mutex_;
  redisContext* context_ = nullptr;
};

}  // namespace

Expected<std::unique_ptr<Store>> redis_store(const std::string& url, std::string password, Limits limits) {
  auto address = parse_redis_url(url);
  if (!address) return tl::make_unexpected(address.error());
  return std::unique_ptr<Store>(std::make_unique<RedisStore>(std::move(*address), std::move(password), limits));
}

#else

Expected<std::unique_ptr<Store>> redis_store(const std::string& url, std::string, Limits) {
  if (auto address = parse_redis_url(url); !address) return tl::make_unexpected(address.error());
  return fail("this fabuild was built without Redis (hiredis was not found when it was built)",
              "use an http:// remote, or build fabuild with libhiredis-dev installed");
}

#endif

}  // namespace fabuild::remote
