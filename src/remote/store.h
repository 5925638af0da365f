#pragma once

// The remote tier of the object cache (docs/performance.md, "Sharing the cache between
// machines"): a key-value store other machines reach, spoken as plain HTTP GET, HEAD and PUT on
// <url>/<key>, which nginx with WebDAV PUT, bazel-remote, ccache's HTTP storage servers and
// S3-compatible stores behind a presigned or proxy URL all serve. It is an optimisation only:
// every call has a time limit, and its callers treat any Failure as a miss.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "util/expected.h"

namespace fabuild::remote {

struct Limits {
  std::chrono::milliseconds connect{3000};   // per request, to open the connection
  std::chrono::milliseconds request{60000};  // per request, all of it
  // A request that moves fewer than stall_bytes_per_s for `stall` is given up: a server that
  // hangs after accepting, or drips its answer, costs seconds, not the whole request limit.
  std::chrono::seconds stall{5};
  long stall_bytes_per_s = 1024;
  std::uint64_t max_object_bytes = 1ull << 30;  // a larger object is neither fetched nor sent
};

class Store {
 public:
  virtual ~Store() = default;
  // The object, or nullopt when the server does not have it (404); a Failure when it could not
  // say (down, slow, 5xx, too large, cut short).
  virtual Expected<std::optional<std::string>> get(const std::string& key) = 0;
  virtual Expected<bool> has(const std::string& key) = 0;
  virtual Expected<void> put(const std::string& key, const std::string& bytes) = 0;
  // For notes: the URL, never the token.
  [[nodiscard]] virtual std::string where() const = 0;
};

// `url`: http:// or https://, with or without a trailing slash. `bearer_token`: sent as
// "Authorization: Bearer ..." when not empty.
std::unique_ptr<Store> http_store(std::string url, std::string bearer_token, Limits limits = {});

// redis://host[:port][/db] (port 6379, database 0 by default): the same keys as values, through
// GET, EXISTS and SET. `password` (the token variable's value): sent with AUTH when not empty.
struct RedisAddress {
  std::string host;
  int port = 6379;
  int db = 0;
};
Expected<RedisAddress> parse_redis_url(const std::string& url);
Expected<std::unique_ptr<Store>> redis_store(const std::string& url, std::string password, Limits limits = {});

// The store a URL names: http(s):// or redis://.
Expected<std::unique_ptr<Store>> open_store(const std::string& url, std::string token, Limits limits = {});

}  // namespace fabuild::remote
