#pragma once

// Fetching one file over HTTP(S) the way a build farm needs it: retried when the network or the
// server hiccups, resumed rather than restarted, bounded in size and time, verified against a
// pinned SHA-256, and published at its destination only when whole and verified.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace fabuild {

// Defaults sized for a PyPI sdist (flash-attn's is ~8 MB) over a slow CI link. Tests shrink them.
inline constexpr int kDownloadAttempts = 4;
inline constexpr std::chrono::milliseconds kFirstRetryDelay{1000};  // doubled per retry...
inline constexpr std::chrono::milliseconds kMaxRetryDelay{30000};   // ...up to this
inline constexpr std::chrono::milliseconds kConnectTimeout{30000};
// A transfer slower than kStallBytesPerSecond for kStallTime is dead, not slow: retry it.
inline constexpr std::chrono::seconds kStallTime{60};
inline constexpr long kStallBytesPerSecond = 1024;
// A transfer that has received nothing for this long is named, once, before the stall check
// ends it: a stalled server is never a silent minute.
inline constexpr std::chrono::seconds kQuietNotice{10};
inline constexpr std::uint64_t kMaxDownloadBytes = std::uint64_t{2} << 30;  // 2 GiB
inline constexpr long kMaxRedirects = 5;

struct DownloadOptions {
  // Lowercase or uppercase hex. Without it nothing is verified, and a `.part` left by an earlier
  // run is discarded instead of resumed (nothing could catch a stale prefix).
  std::optional<std::string> expected_sha256{};
  int max_attempts = kDownloadAttempts;
  std::chrono::milliseconds first_retry_delay = kFirstRetryDelay;
  std::chrono::milliseconds max_retry_delay = kMaxRetryDelay;
  std::chrono::milliseconds connect_timeout = kConnectTimeout;
  std::chrono::seconds stall_time = kStallTime;  // whole seconds: libcurl's granularity
  long stall_bytes_per_second = kStallBytesPerSecond;
  std::chrono::seconds quiet_notice = kQuietNotice;
  std::uint64_t max_bytes = kMaxDownloadBytes;
  long max_redirects = kMaxRedirects;
};

struct DownloadResult {
  std::filesystem::path path;        // == dest_path
  std::string sha256;                // lowercase hex of what is at `path`
  std::uint64_t size = 0;            // bytes at `path`
  int attempts = 0;                  // HTTP requests made, retries included
  std::uint64_t bytes_received = 0;  // body bytes over the wire, all attempts together
};

// Downloads `url` (http or https) to `dest_path`, creating its directory. Work in progress lives
// in `<dest_path>.part`; `dest_path` appears by rename only once complete and verified, so it is
// never a partial or corrupt file (an existing one is replaced only on success).
//
// Retried with exponential backoff: connection failures, timeouts, stalls, truncated bodies,
// HTTP 5xx, 408 and 429. Not retried: other 4xx, redirect loops, bodies over max_bytes, a
// SHA-256 mismatch. A failure is a Failure naming the URL (credentials redacted) and what to
// do; a malformed options.expected_sha256 is bad configuration (normalized_sha256 throws).
[[nodiscard]] Expected<DownloadResult> download(const std::string& url, const std::filesystem::path& dest_path,
                                                const DownloadOptions& options = {});

// "https://user:token@host/p" -> "https://***@host/p", for every message and log line.
std::string redact_url(std::string_view url);

// Lowercased `sha256` if it is 64 hex digits; otherwise a Failure naming `url`.
[[nodiscard]] Expected<std::string> parse_sha256(std::string_view sha256, std::string_view url);
// The same for a digest the matrix or a caller gives: a malformed one is a UserError (exit 2).
std::string normalized_sha256(std::string_view sha256, std::string_view url);

}  // namespace fabuild
