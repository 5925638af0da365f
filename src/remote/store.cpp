#include "remote/store.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include "util/curl_global.h"

namespace fabuild::remote {
namespace {

struct Body {
  std::string bytes;
  std::uint64_t max = 0;
  bool too_large = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  const std::size_t n = size * count;
  if (body->bytes.size() + n > body->max) {
    body->too_large = true;
    return 0;  // stops the transfer
  }
  body->bytes.append(data, n);
  return n;
}

struct Upload {
  const std::string* bytes = nullptr;
  std::size_t offset = 0;
};

std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* up = static_cast<Upload*>(user);
  const std::size_t n = std::min(size * count, up->bytes->size() - up->offset);
  std::copy_n(up->bytes->data() + up->offset, n, buffer);
  up->offset += n;
  return n;
}

using Easy = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using Headers = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

class HttpStore final : public Store {
 public:
  HttpStore(std::string url, std::string token, Limits limits)
      : url_(std::move(url)), token_(std::move(token)), limits_(limits) {
    while (!url_.empty() && url_.back() == '/') url_.pop_back();
    init_curl_once();
  }

  Expected<std::optional<std::string>> get(const std::string& key) override {
    Body body;
    body.max = limits_.max_object_bytes;
    auto status = request(
        key, "GET",
        [&](CURL* h) {
          curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
          curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
        },
        &body.too_large);
    if (!status) return tl::make_unexpected(status.error());
    if (*status == 404) return std::optional<std::string>{};
    if (*status != 200) return fail(fmt::format("GET {}/{}: HTTP {}", url_, key, *status));
    return std::optional<std::string>{std::move(body.bytes)};
  }

  Expected<bool> has(const std::string& key) override {
    auto status = request(key, "HEAD", [](CURL* h) { curl_easy_setopt(h, CURLOPT_NOBODY, 1L); });
    if (!status) return tl::make_unexpected(status.error());
    if (*status == 404) return false;
    if (*status == 200) return true;
    return fail(fmt::format("HEAD {}/{}: HTTP {}", url_, key, *status));
  }

  Expected<void> put(const std::string& key, const std::string& bytes) override {
    if (bytes.size() > limits_.max_object_bytes) {
      return fail(
          fmt::format("PUT {}/{}: {} bytes, over the limit of {}", url_, key, bytes.size(), limits_.max_object_bytes));
    }
    Upload up{&bytes, 0};
    auto status = request(key, "PUT", [&](CURL* h) {
      curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
      curl_easy_setopt(h, CURLOPT_READDATA, &up);
      curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(bytes.size()));
    });
    if (!status) return tl::make_unexpected(status.error());
    if (*status < 200 || *status >= 300) return fail(fmt::format("PUT {}/{}: HTTP {}", url_, key, *status));
    return {};
  }

  [[nodiscard]] std::string where() const override { return url_; }

 private:
  template <class Setup>
  Expected<long> request(const std::string& key, const char* method, Setup setup, const bool* too_large = nullptr) {
    Easy h(curl_easy_init(), curl_easy_cleanup);
    if (!h) return fail("cannot start an HTTP request (curl_easy_init)");
    const std::string url = url_ + "/" + key;
    char error[CURL_ERROR_SIZE] = {};
    Headers headers(nullptr, curl_slist_free_all);
    if (!token_.empty()) {
      headers.reset(curl_slist_append(nullptr, ("Authorization: Bearer " + token_).c_str()));
      curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, headers.get());
    }
    // PUT: no "Expect: 100-continue" round trip.
    Headers expect(curl_slist_append(headers.release(), "Expect:"), curl_slist_free_all);
    curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, expect.get());
    curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(h.get(), CURLOPT_CUSTOMREQUEST, std::string_view(method) == "HEAD" ? nullptr : method);
    curl_easy_setopt(h.get(), CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h.get(), CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits_.connect.count()));
    curl_easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(limits_.request.count()));
    curl_easy_setopt(h.get(), CURLOPT_LOW_SPEED_LIMIT, limits_.stall_bytes_per_s);
    curl_easy_setopt(h.get(), CURLOPT_LOW_SPEED_TIME, static_cast<long>(limits_.stall.count()));
    curl_easy_setopt(h.get(), CURLOPT_FOLLOWLOCATION, 1L);  // a presigned store may redirect
    curl_easy_setopt(h.get(), CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(h.get(), CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h.get(), CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    setup(h.get());
    const CURLcode rc = curl_easy_perform(h.get());
    if (too_large != nullptr && *too_large) {
      return fail(fmt::format("{} {}: larger than the limit of {} bytes", method, url, limits_.max_object_bytes));
    }
    if (rc != CURLE_OK) {
      return fail(fmt::format("{} {}: {}", method, url, error[0] != '\0' ? error : curl_easy_strerror(rc)));
    }
    long status = 0;
    curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &status);
    return status;
  }

  std::string url_;
  std::string token_;
  Limits limits_;
};

}  // namespace

std::unique_ptr<Store> http_store(std::string url, std::string bearer_token, Limits limits) {
  return std::make_unique<HttpStore>(std::move(url), std::move(bearer_token), limits);
}

Expected<std::unique_ptr<Store>> open_store(const std::string& url, std::string token, Limits limits) {
  if (url.starts_with("redis://")) return redis_store(url, std::move(token), limits);
  if (url.starts_with("http://") || url.starts_with("https://")) return http_store(url, std::move(token), limits);
  return fail(fmt::format("'{}' is not an http://, https:// or redis:// URL", url));
}

}  // namespace fabuild::remote
