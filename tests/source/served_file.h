#pragma once

// A test fixture serving one pseudo-random file from tests/support/http_server.py, with download
// options shrunk so that retries and stalls take milliseconds to seconds, not minutes.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "../support/http_server.h"
#include "../support/scratch_dir.h"
#include "source/download.h"
#include "util/hash.h"

namespace fabuild::test {

inline std::string slurp_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

class ServedFileTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kBodySize = 256 * 1024;

  void SetUp() override {
    // The only traffic these tests may send is to 127.0.0.1: no proxy in between.
    for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"})
      ::unsetenv(name);
    std::mt19937 random(42);  // incompressible and reproducible
    body_.resize(kBodySize);
    for (auto& c : body_) c = static_cast<char>(random() & 0xFF);
    write_file(scratch_.path() / "body.bin", body_);
    server_ = std::make_unique<LocalHttpServer>(scratch_.path() / "body.bin", scratch_.path() / "requests.log");
  }

  [[nodiscard]] std::string body_sha256() const { return hex(sha256_of(body_)); }

  [[nodiscard]] DownloadOptions fast_options() const {
    DownloadOptions o;
    o.expected_sha256 = body_sha256();
    o.max_attempts = 3;
    o.first_retry_delay = std::chrono::milliseconds(10);
    o.max_retry_delay = std::chrono::milliseconds(40);
    o.connect_timeout = std::chrono::milliseconds(2000);
    o.stall_time = std::chrono::seconds(1);
    o.stall_bytes_per_second = 1000;
    return o;
  }

  [[nodiscard]] std::filesystem::path dest() const { return scratch_.path() / "out" / "flash_attn-2.8.3.tar.gz"; }
  [[nodiscard]] std::filesystem::path part() const {
    auto p = dest();
    p += ".part";
    return p;
  }

  // What downloading `url` to dest() gave; an empty result, and a failed test, when it failed.
  DownloadResult fetched(const std::string& url, const DownloadOptions& options) const {
    const Expected<DownloadResult> r = download(url, dest(), options);
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return r ? *r : DownloadResult{};
  }

  // The Failure that downloading `url` to dest() gave, as "what; hint"; fails the test if none.
  std::string failure_of(const std::string& url, const DownloadOptions& options) const {
    const Expected<DownloadResult> r = download(url, dest(), options);
    EXPECT_FALSE(r.has_value()) << url << " downloaded without an error";
    return r ? std::string() : r.error().what + "\n  hint: " + r.error().hint;
  }

  ScratchDir scratch_{"fabuild-source"};
  std::string body_;
  std::unique_ptr<LocalHttpServer> server_;
};

}  // namespace fabuild::test
