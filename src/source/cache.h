#pragma once

// fabuild's download cache: an sdist is fetched once per machine, and every later build (and
// every cell of a matrix) reuses it for as long as it still has its pinned SHA-256.

#include <filesystem>
#include <string>
#include <string_view>

#include "source/download.h"

namespace fabuild {

// Where `url` with `sha256` lives in the cache at `root`: downloads/<sha256>/<file name from the
// URL>. Keyed by hash, so two files never share a slot and the file keeps the name pip expects.
std::filesystem::path cached_path(const std::filesystem::path& root, const std::string& url, std::string_view sha256);

// The digest published beside a download: `<url>.sha256`, whose first word is 64 hex digits (the
// `sha256sum` format). For sdists whose matrix gives no sha256. A Failure when it is not there
// or not a digest.
[[nodiscard]] Expected<std::string> sha256_beside(const std::string& url, const DownloadOptions& options = {});

// The cached file for `url` in the cache at `root` (System::cache_dir) if present and still
// matching `sha256` (which is required); otherwise downloads it there (options.expected_sha256 is
// set from `sha256`). A cached file that no longer matches is deleted and downloaded again.
// A Failure says why not: the download's, or a cache slot that cannot be locked.
[[nodiscard]] Expected<std::filesystem::path> cached_download_in(const std::filesystem::path& root,
                                                                 const std::string& url, std::string_view sha256,
                                                                 DownloadOptions options = {});

}  // namespace fabuild
