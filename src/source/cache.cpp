#include "source/cache.h"

#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

#include "util/entry_cache.h"
#include "util/entry_lock.h"
#include "util/error.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/holder_lock.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

// The last path segment of the URL, if it is a plain file name; pip and humans both read it.
std::string file_name_of(std::string_view url) {
  url = url.substr(0, url.find_first_of("?#"));
  const auto scheme = url.find("://");
  if (scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
  const auto slash = url.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? std::string_view{} : url.substr(slash + 1);
  const bool plain = !last.empty() && last != "." && last != ".." &&
                     last.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") ==
                         std::string_view::npos;
  return plain ? std::string(last) : std::string("download");
}

// The make lock of the cache slot (downloads/<sha256>/; util/entry_lock.h), for as long as one
// process checks and fills it; a trim leaves the slot alone meanwhile.
Expected<HolderLock> lock_slot(const fs::path& dir, const std::string& url) {
  Expected<HolderLock> lock =
      HolderLock::take(entry_make_lock(dir), "downloading " + redact_url(url),
                       [&](const LockHolder& holder) { spdlog::info("waiting for {}", holder.describe()); });
  if (!lock) {
    return fail(
        fmt::format("{}: cannot lock the download cache for {}: {}", dir.string(), redact_url(url), lock.error().what),
        "check that the cache directory is writable (or set FABUILD_CACHE_DIR)");
  }
  return lock;
}

}  // namespace

fs::path cached_path(const fs::path& root, const std::string& url, std::string_view sha256) {
  return root / "downloads" / normalized_sha256(sha256, url) / file_name_of(url);
}

Expected<fs::path> cached_download_in(const fs::path& root, const std::string& url, std::string_view sha256,
                                      DownloadOptions options) {
  const std::string expected = normalized_sha256(sha256, url);
  const fs::path path = cached_path(root, url, expected);
  std::error_code ec;
  // Two processes (two runs sharing the cache) must not both append to one .part: the second
  // would keep writing into the file the first had just verified and renamed. Whoever waits
  // here finds the other's verified file below.
  const Expected<HolderLock> lock = lock_slot(path.parent_path(), url);
  if (!lock) return tl::make_unexpected(lock.error());
  if (fs::is_regular_file(path, ec)) {
    const Expected<Sha256> sum = sha256_of_file(path);
    if (!sum) spdlog::warn("cannot read cached {}: {}", path.string(), sum.error().what);
    const std::string actual = sum ? hex(*sum) : std::string();
    if (actual == expected) {
      spdlog::debug("using cached {}", path.string());
      mark_used(path.parent_path());  // the slot: trimmed by last use (util/entry_cache.h)
      return path;
    }
    // Disk corruption or a hand edit: the cache must never hand out a file that does not match.
    spdlog::warn("cached {} no longer matches its sha256 ({}); downloading it again", path.string(), actual);
    fs::remove(path, ec);
  }
  options.expected_sha256 = expected;
  return download(url, path, options).map([](const DownloadResult& r) { return r.path; });
}

Expected<std::string> sha256_beside(const std::string& url, const DownloadOptions& options) {
  const std::string checksum_url = url + ".sha256";
  const Expected<fs::path> dir = make_temp_directory("fabuild-sha256-");
  if (!dir) return fail(fmt::format("{} (for {})", dir.error().what, redact_url(checksum_url)));
  const fs::path file = *dir / "checksum";
  DownloadOptions o = options;
  o.expected_sha256.reset();
  o.max_bytes = 4096;
  const Expected<DownloadResult> got = download(checksum_url, file, o);
  std::string text;
  if (got) std::ifstream(file) >> text;
  std::error_code ec;
  fs::remove_all(*dir, ec);
  if (!got) {
    // The digest was to come from beside the archive: say that the matrix can give it instead.
    return fail(got.error().what + " (fabuild looks there for the archive's sha256)",
                "give the archive's digest in the matrix instead: source: {sdist: URL, sha256: <64 hex>} "
                "(sha256sum of the file), or publish URL.sha256 beside it");
  }
  return parse_sha256(text, checksum_url);
}

}  // namespace fabuild
