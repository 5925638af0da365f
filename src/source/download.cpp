#include "source/download.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <thread>

#include "source/http_transfer.h"
#include "util/error.h"
#include "util/file.h"
#include "util/hash.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using Kind = TransferOutcome::Kind;

// What the server or the network said is quoted as a UserError would quote it (util/error.h).
tl::unexpected<Failure> download_failed(const std::string& url, const std::string& what, std::string hint) {
  return fail(printable(fmt::format("download of {} failed: {}", redact_url(url), what)), std::move(hint));
}

std::string hint_for(const TransferOutcome& out) {
  if (out.http_status == 404 || out.http_status == 410)
    return "check the URL: the file (or this version of the package) may not exist on that index";
  if (out.http_status == 401 || out.http_status == 403) return "check the index credentials and access rights";
  if (out.kind == Kind::kRetryable) return "the network or the server kept failing; try again later, or use a mirror";
  return "check the URL and the server it points at";
}

std::chrono::milliseconds retry_delay(const DownloadOptions& options, int failed_attempts) {
  auto delay = options.first_retry_delay;
  for (int i = 1; i < failed_attempts && delay < options.max_retry_delay; ++i) delay *= 2;
  return std::min(delay, options.max_retry_delay);
}

struct Fetched {
  int attempts = 0;
  std::uint64_t received = 0;
};

// Requests until the .part holds a complete body, or says why not. A failed attempt keeps what
// it wrote, and the next one asks for the rest with a Range request.
Expected<Fetched> fetch_with_retries(const std::string& url, const fs::path& part, const DownloadOptions& options) {
  const int max_attempts = std::max(1, options.max_attempts);
  Fetched fetched;
  for (int attempt = 1;; ++attempt) {
    // The .part, appended to by every attempt so that each one continues where the last stopped.
    Expected<File> file = File::open(part, File::Mode::kAppend);
    if (!file) return download_failed(url, file.error().what, "check that the destination directory is writable");
    const TransferOutcome out = transfer_once(url, *file, file->size(), options);
    fetched.attempts = attempt;
    fetched.received += out.received;
    if (out.range_ignored) {
      spdlog::info("{} ignored the Range request; downloaded the whole file again", redact_url(url));
    }
    if (out.kind == Kind::kComplete) {
      // A crash after the rename must not leave a file whose name says "verified" but whose
      // blocks never reached the disk.
      if (auto synced = file->sync(); !synced) return download_failed(url, synced.error().what, "check the disk");
      return fetched;
    }
    if (out.kind == Kind::kFatal) {
      std::error_code ignored;
      fs::remove(part, ignored);  // whatever it holds cannot be continued
      return download_failed(url, out.error, hint_for(out));
    }
    if (out.kind == Kind::kRestart) {
      if (auto emptied = file->truncate(); !emptied) {
        return download_failed(url, emptied.error().what, "check that the destination directory is writable");
      }
    }
    if (attempt >= max_attempts) {
      // The .part stays: with a pinned sha256 the next run resumes it.
      return download_failed(url, fmt::format("{} (gave up after {} attempts)", out.error, attempt), hint_for(out));
    }
    // A restart is the server telling us how to proceed, not a failure to wait out.
    const auto delay = out.kind == Kind::kRestart ? std::chrono::milliseconds(0) : retry_delay(options, attempt);
    spdlog::warn("download of {}: {}; attempt {} of {} in {} ms", redact_url(url), out.error, attempt + 1, max_attempts,
                 delay.count());
    std::this_thread::sleep_for(delay);
  }
}

Expected<std::string> sha256_hex_of(const fs::path& file, const std::string& url) {
  const Expected<Sha256> sum = sha256_of_file(file);
  if (!sum) return download_failed(url, sum.error().what, "check the disk and the destination directory");
  return hex(*sum);
}

}  // namespace

std::string redact_url(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const auto authority_start = scheme_end + 3;
  const auto authority_end = url.find_first_of("/?#", authority_start);
  const auto authority =
      url.substr(authority_start,
                 authority_end == std::string_view::npos ? std::string_view::npos : authority_end - authority_start);
  const auto at = authority.rfind('@');  // a password may itself contain '@' when unescaped
  if (at == std::string_view::npos) return std::string(url);
  return fmt::format("{}***{}", url.substr(0, authority_start), url.substr(authority_start + at));
}

Expected<std::string> parse_sha256(std::string_view sha256, std::string_view url) {
  std::string out;
  for (char c : sha256) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool ok = out.size() == 64 && std::all_of(out.begin(), out.end(),
                                                  [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  if (!ok) {
    return fail(fmt::format("'{}' is not a SHA-256 (64 hex digits) for {}", sha256, redact_url(url)),
                "copy the sha256 from the index's file listing (PyPI shows it under 'Hashes')");
  }
  return out;
}

std::string normalized_sha256(std::string_view sha256, std::string_view url) {
  Expected<std::string> out = parse_sha256(sha256, url);
  if (!out) throw config_error(Location{}, out.error().what, out.error().hint);
  return std::move(*out);
}

Expected<DownloadResult> download(const std::string& url, const fs::path& dest_path, const DownloadOptions& options) {
  std::optional<std::string> expected;
  if (options.expected_sha256) expected = normalized_sha256(*options.expected_sha256, url);
  fs::path part = dest_path;
  part += ".part";

  std::error_code ec;
  if (dest_path.has_parent_path()) fs::create_directories(dest_path.parent_path(), ec);
  if (ec) {
    return download_failed(url, fmt::format("cannot create {}: {}", dest_path.parent_path().string(), ec.message()),
                           "check that the destination directory is writable");
  }
  // An earlier run's .part is worth resuming only if the hash can catch a prefix of another file.
  const bool resuming_earlier_run = fs::exists(part, ec) && expected.has_value();
  if (resuming_earlier_run) {
    spdlog::info("resuming {} from {} bytes", redact_url(url), fs::file_size(part, ec));
  } else {
    fs::remove(part, ec);
  }

  Expected<Fetched> fetched = fetch_with_retries(url, part, options);
  if (!fetched) return tl::make_unexpected(fetched.error());
  Expected<std::string> actual = sha256_hex_of(part, url);
  if (!actual) return tl::make_unexpected(actual.error());
  if (expected && *actual != *expected && resuming_earlier_run) {
    // The prefix may be from another file (the pin changed since): one clean download decides.
    spdlog::warn("{}: the resumed download does not match its sha256; downloading it whole", redact_url(url));
    fs::remove(part, ec);
    const Expected<Fetched> again = fetch_with_retries(url, part, options);
    if (!again) return tl::make_unexpected(again.error());
    fetched->attempts += again->attempts;
    fetched->received += again->received;
    actual = sha256_hex_of(part, url);
    if (!actual) return tl::make_unexpected(actual.error());
  }
  if (expected && *actual != *expected) {
    fs::remove(part, ec);  // never leave bytes behind that a later run could resume or trust
    return fail(fmt::format("sha256 mismatch for {}: expected {}, got {}", redact_url(url), *expected, *actual),
                "the server sent a different file than the pinned one; check the sha256 in the matrix "
                "(or the mirror serving the file). The download was deleted.");
  }
  if (auto moved = replace_file(part, dest_path); !moved) {
    return download_failed(url, moved.error().what, "check that the destination is writable and not a directory");
  }
  DownloadResult result;
  result.path = dest_path;
  result.sha256 = *actual;
  result.size = fs::file_size(dest_path, ec);
  result.attempts = fetched->attempts;
  result.bytes_received = fetched->received;
  return result;
}

}  // namespace fabuild
