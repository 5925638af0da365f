// `cache:` in the matrix (docs/performance.md): the compiler object cache that lets the cells
// of one (FlashAttention, torch, CUDA, archs) row share their compiled kernels.

#include <fmt/format.h>

#include "matrix/loader.h"
#include "matrix/loader_parts.h"
#include "util/byte_size.h"

namespace fabuild::loader {

namespace {

using yaml::Reader;

const std::vector<std::string> kCacheKeys = {
    "dir",          "max_size",        "enabled",     "remote",         "remote_token_env",
    "remote_write", "signing_key_env", "verify_keys", "verify_keys_env"};

// A variable's name: what a key that names one holds.
std::string read_env_name(const Reader& r, const YAML::Node& node, const std::string& what) {
  std::string name = r.scalar(node, what);
  if (name.empty() || name.find_first_of("=$ \t") != std::string::npos) {
    r.fail(node, fmt::format("{} '{}' is not a variable's name", what, name), "e.g. FABUILD_CACHE_SIGNING_KEY");
  }
  return name;
}

bool read_bool(const Reader& r, const YAML::Node& node, const std::string& what) {
  const std::string v = r.scalar(node, what);
  if (v == "true" || v == "on" || v == "yes") return true;
  if (v == "false" || v == "off" || v == "no") return false;
  r.fail(node, fmt::format("{} must be true or false, not '{}'", what, v));
}

}  // namespace

CacheSpec read_cache(const Reader& r, const YAML::Node& node) {
  CacheSpec c;
  c.where = r.at(node);
  if (node.IsScalar()) {
    c.enabled = read_bool(r, node, "cache");
    return c;
  }
  r.expect_map(node, "cache");
  r.check_keys(node, kCacheKeys, "cache");
  if (const auto n = node["enabled"]) c.enabled = read_bool(r, n, "cache.enabled");
  if (const auto n = node["dir"]) {
    c.dir = r.scalar(n, "cache.dir");
    if (c.dir.empty()) r.fail(n, "cache.dir is empty", "leave it out for the default, <fabuild's cache>/objects");
  }
  if (const auto n = node["max_size"]) {
    const std::string text = r.scalar(n, "cache.max_size");
    const auto bytes = parse_byte_size(text);
    if (!bytes || *bytes == 0) {
      r.fail(n, fmt::format("cache.max_size '{}' is not a size", text), "e.g. 20G, 500M or 1.5GiB");
    }
    c.max_bytes = bytes;
  }
  if (const auto n = node["remote"]) {
    c.remote = r.scalar(n, "cache.remote");
    if (const auto url = check_remote_url(c.remote); !url)
      r.fail(n, "cache.remote " + url.error().what, url.error().hint);
  }
  if (const auto n = node["remote_token_env"]) {
    c.remote_token_env = r.scalar(n, "cache.remote_token_env");
    if (c.remote_token_env.empty()) r.fail(n, "cache.remote_token_env is empty", "name an environment variable");
  }
  if (const auto n = node["remote_write"]) {
    const std::string v = r.scalar(n, "cache.remote_write");
    if (v == "auto") {
      c.remote_write = "auto";
    } else if (v == "true" || v == "on" || v == "yes") {
      c.remote_write = "true";
    } else if (v == "false" || v == "off" || v == "no") {
      c.remote_write = "false";
    } else {
      r.fail(n, fmt::format("cache.remote_write must be auto, true or false, not '{}'", v),
             "auto writes only from trusted runs (never a pull request's); docs/security.md");
    }
    c.remote_write_where = r.at(n);
  }
  if (const auto n = node["signing_key_env"]) c.signing_key_env = read_env_name(r, n, "cache.signing_key_env");
  if (const auto n = node["verify_keys_env"]) c.verify_keys_env = read_env_name(r, n, "cache.verify_keys_env");
  if (const auto n = node["verify_keys"]) {
    const auto add = [&](const YAML::Node& k) {
      std::string key = r.scalar(k, "cache.verify_keys");
      if (key.empty())
        r.fail(k, "cache.verify_keys holds an empty key", "a public key: `openssl pkey -pubout`'s base64");
      c.verify_keys.push_back(std::move(key));
    };
    if (n.IsSequence()) {
      for (const auto& k : n) add(k);
    } else {
      add(n);
    }
  }
  return c;
}

}  // namespace fabuild::loader

namespace fabuild {

Expected<void> check_remote_url(const std::string& url) {
  if (!url.starts_with("http://") && !url.starts_with("https://") && !url.starts_with("redis://")) {
    return fail(fmt::format("'{}' is not an http://, https:// or redis:// URL", url),
                "e.g. https://cache.example.org/fabuild (a server that answers GET, HEAD and PUT on "
                "<url>/<key>) or redis://127.0.0.1:6379/0");
  }
  const std::size_t start = url.find("://") + 3;
  const std::size_t end = url.find('/', start);
  const std::string authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (authority.find('@') != std::string::npos) {
    return fail("holds credentials (user:password@)",
                "keep secrets out of URLs: put a bearer token in the variable cache.remote_token_env names "
                "(FABUILD_CACHE_REMOTE_TOKEN by default)");
  }
  if (url.find_first_of("?#") != std::string::npos) {
    return fail(fmt::format("'{}' has a query or fragment", url),
                "each object is <url>/<key>: a presigned URL signs one object, not a cache; put a proxy that "
                "signs each request in front of the store and name the proxy");
  }
  return {};
}

}  // namespace fabuild
