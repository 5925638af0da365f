#include "source/http_transfer.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>

#include "util/curl_global.h"

namespace fabuild {
namespace {

// Why our own callbacks stopped the transfer; libcurl only reports "write error".
enum class Abort { kNone, kHttpError, kTooLarge, kBadRange, kDiskError };

struct Transfer {
  File* file = nullptr;
  std::uint64_t offset = 0;  // bytes in the file before this body; 0 once a 200 replaced them
  std::uint64_t max_bytes = 0;
  long status = 0;                // of the latest response: a redirect chain has several
  std::int64_t range_start = -1;  // Content-Range: bytes <start>-<end>/<total>
  std::int64_t range_total = -1;  // ...or bytes */<total> on a 416
  bool body_started = false;
  bool range_ignored = false;
  std::uint64_t received = 0;
  Abort abort = Abort::kNone;
  std::string disk_error;
  // Saying once that nothing arrives, long before the stall check gives up on the attempt.
  const std::string* url = nullptr;
  std::chrono::seconds stall_time{0};
  std::chrono::seconds quiet_notice{0};
  std::chrono::steady_clock::time_point last_data = std::chrono::steady_clock::now();
  bool said_quiet = false;
};

// libcurl's progress callback (about once a second): names a download that has received
// nothing for DownloadOptions::quiet_notice, once, so that a stalled server is not a silent minute.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto& t = *static_cast<Transfer*>(user);
  const auto quiet = std::chrono::steady_clock::now() - t.last_data;
  if (!t.said_quiet && quiet >= t.quiet_notice && t.stall_time > t.quiet_notice) {
    t.said_quiet = true;
    spdlog::warn("{}: nothing received for {} s; this attempt is given up after {} s without data and retried",
                 redact_url(*t.url), std::chrono::duration_cast<std::chrono::seconds>(quiet).count(),
                 t.stall_time.count());
  }
  return 0;
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

std::int64_t parse_number(std::string_view text) {
  std::int64_t n = 0;
  bool any = false;
  for (char c : text) {
    if (c < '0' || c > '9') break;
    n = n * 10 + (c - '0');
    any = true;
  }
  return any ? n : -1;
}

// "bytes 100-199/200" or "bytes */200".
void parse_content_range(std::string_view value, Transfer& t) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (!starts_with_nocase(value, "bytes ")) return;
  value.remove_prefix(6);
  t.range_start = value.starts_with('*') ? -1 : parse_number(value);
  const auto slash = value.find('/');
  if (slash != std::string_view::npos) t.range_total = parse_number(value.substr(slash + 1));
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    // A new response (after a redirect): the previous one's headers no longer apply.
    t.range_start = t.range_total = -1;
    const auto space = line.find(' ');
    t.status = space == std::string_view::npos ? 0 : parse_number(line.substr(space + 1));
  } else if (starts_with_nocase(line, "content-range:")) {
    parse_content_range(line.substr(14), t);
  }
  return size * count;
}

// Decides, at the first body byte, whether the body continues our file, replaces it, or is
// something else entirely. Returns false to stop the transfer.
bool accept_body(Transfer& t) {
  if (t.status >= 400) {
    t.abort = Abort::kHttpError;  // an error page is not the file: do not let it near the .part
    return false;
  }
  if (t.status == 200 && t.offset > 0) {
    // The server ignored our Range and sent the whole file: start the file over.
    if (auto emptied = t.file->truncate(); !emptied) {
      t.abort = Abort::kDiskError;
      t.disk_error = emptied.error().what;
      return false;
    }
    t.offset = 0;
    t.range_ignored = true;
  } else if (t.status == 206 && t.range_start != static_cast<std::int64_t>(t.offset)) {
    t.abort = Abort::kBadRange;
    return false;
  }
  return true;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  t.last_data = std::chrono::steady_clock::now();
  if (!t.body_started) {
    t.body_started = true;
    if (!accept_body(t)) return 0;
  }
  // Checked while streaming: a body without Content-Length gets past CURLOPT_MAXFILESIZE.
  if (t.offset + t.received + n > t.max_bytes) {
    t.abort = Abort::kTooLarge;
    return 0;
  }
  if (auto written = t.file->write(std::string_view(data, n)); !written) {
    t.abort = Abort::kDiskError;
    t.disk_error = written.error().what;
    return 0;
  }
  t.received += n;
  return n;
}

bool retryable_status(long status) { return status == 408 || status == 429 || status >= 500; }

bool retryable_curl_error(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:  // the connect timeout and the stall check both land here
    case CURLE_PARTIAL_FILE:        // body shorter than its Content-Length
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

using Kind = TransferOutcome::Kind;

TransferOutcome judge(CURLcode rc, const char* curl_error, const Transfer& t, std::uint64_t offset,
                      const DownloadOptions& options) {
  TransferOutcome out;
  out.http_status = t.status;
  out.received = t.received;
  out.range_ignored = t.range_ignored;
  auto result = [&](Kind kind, std::string error) {
    out.kind = kind;
    out.error = std::move(error);
    return out;
  };
  switch (t.abort) {
    case Abort::kTooLarge:
      return result(Kind::kFatal, fmt::format("the body is larger than the limit of {} bytes", options.max_bytes));
    case Abort::kDiskError:
      return result(Kind::kFatal, t.disk_error);
    case Abort::kBadRange:
      return result(Kind::kRestart, fmt::format("asked for bytes from {}, got HTTP {} starting at {}", offset, t.status,
                                                t.range_start));
    case Abort::kHttpError:
    case Abort::kNone:
      break;
  }
  if (t.status == 416) {
    // Nothing left after our offset: the .part may already be whole (verification decides).
    if (t.range_total >= 0 && static_cast<std::uint64_t>(t.range_total) == offset) return result(Kind::kComplete, "");
    return result(Kind::kRestart, "HTTP 416 (the server cannot continue from where the partial file ends)");
  }
  if (t.status >= 400) {
    return result(retryable_status(t.status) ? Kind::kRetryable : Kind::kFatal, fmt::format("HTTP {}", t.status));
  }
  if (rc == CURLE_FILESIZE_EXCEEDED) {
    return result(Kind::kFatal, fmt::format("the server announced more than the limit of {} bytes", options.max_bytes));
  }
  if (rc == CURLE_TOO_MANY_REDIRECTS) {
    return result(Kind::kFatal, fmt::format("a redirect loop, or more than {} redirects", options.max_redirects));
  }
  if (rc != CURLE_OK) {
    const std::string what = curl_error[0] != '\0' ? curl_error : curl_easy_strerror(rc);
    return result(retryable_curl_error(rc) ? Kind::kRetryable : Kind::kFatal, what);
  }
  if (t.status != 200 && t.status != 206) {
    return result(Kind::kFatal, fmt::format("unexpected HTTP {} (expected 200 or 206)", t.status));
  }
  return result(Kind::kComplete, "");
}

}  // namespace

TransferOutcome transfer_once(const std::string& url, File& file, std::uint64_t offset,
                              const DownloadOptions& options) {
  if (offset > options.max_bytes) {
    TransferOutcome out;
    out.error = fmt::format("the partial download is already larger than the limit of {} bytes", options.max_bytes);
    return out;
  }
  init_curl_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> handle(curl_easy_init(), &curl_easy_cleanup);
  if (!handle) {
    TransferOutcome out;
    out.error = "libcurl could not create a handle";
    return out;
  }
  CURL* h = handle.get();
  Transfer t;
  t.file = &file;
  t.offset = offset;
  t.max_bytes = options.max_bytes;
  char curl_error[CURL_ERROR_SIZE] = {};
  const std::string range = fmt::format("{}-", offset);

  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");  // no redirect to file://
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, options.max_redirects);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, options.stall_bytes_per_second);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.stall_time.count()));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM from the resolver in a threaded program
  curl_easy_setopt(h, CURLOPT_USERAGENT, "fabuild");
  if (options.max_bytes > offset) {  // 0 would mean "no limit"; on_body still checks
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_bytes - offset));
  }
  if (offset > 0) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_error);
  t.url = &url;
  t.stall_time = options.stall_time;
  t.quiet_notice = options.quiet_notice;
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);

  const CURLcode rc = curl_easy_perform(h);
  return judge(rc, curl_error, t, offset, options);
}

}  // namespace fabuild
