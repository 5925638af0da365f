#include "source/cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "served_file.h"
#include "util/error.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::slurp_file;
using test::write_file;

class CachedDownloadTest : public test::ServedFileTest {
 protected:
  fs::path root() const { return scratch_.path() / "cache"; }
  std::string url() const { return server_->url("/good/flash_attn-2.8.3.tar.gz"); }
};

TEST_F(CachedDownloadTest, SecondCallUsesTheCachedFile) {
  const fs::path first = cached_download_in(root(), url(), body_sha256(), fast_options()).value();
  EXPECT_EQ(first, root() / "downloads" / body_sha256() / "flash_attn-2.8.3.tar.gz");
  EXPECT_TRUE(slurp_file(first) == body_);
  const fs::path second = cached_download_in(root(), url(), body_sha256(), fast_options()).value();
  EXPECT_EQ(second, first);
  EXPECT_EQ(server_->requests().size(), 1u) << "the cached copy must be reused";
}

TEST_F(CachedDownloadTest, CorruptedCacheEntryIsDownloadedAgain) {
  const fs::path path = cached_download_in(root(), url(), body_sha256(), fast_options()).value();
  write_file(path, "bit rot");
  EXPECT_EQ(cached_download_in(root(), url(), body_sha256(), fast_options()).value(), path);
  EXPECT_TRUE(slurp_file(path) == body_);
  EXPECT_EQ(server_->requests().size(), 2u);
}

TEST_F(CachedDownloadTest, Sha256PublishedBesideTheDownload) {
  EXPECT_EQ(sha256_beside(url(), fast_options()).value(), body_sha256());
  // A wrong published digest makes the download itself fail its check.
  const std::string bad = server_->url("/bad-sha/flash_attn-2.8.3.tar.gz");
  const std::string wrong = sha256_beside(bad, fast_options()).value();
  EXPECT_NE(wrong, body_sha256());
  EXPECT_FALSE(cached_download_in(root(), bad, wrong, fast_options()).has_value());
  // No checksum file there: a clear error, not a guess, that says where the digest can come from.
  const Expected<std::string> missing = sha256_beside(server_->url("/404/flash_attn-2.8.3.tar.gz"), fast_options());
  ASSERT_FALSE(missing.has_value()) << "a missing .sha256 gave a digest";
  EXPECT_NE(missing.error().what.find("404"), std::string::npos) << missing.error().what;
  EXPECT_NE(missing.error().what.find("fabuild looks there for the archive's sha256"), std::string::npos)
      << missing.error().what;
  EXPECT_NE(missing.error().hint.find("sha256: <64 hex>"), std::string::npos) << missing.error().hint;
}

TEST_F(CachedDownloadTest, WrongPinLeavesNothingInTheCache) {
  const std::string wrong(64, 'a');
  EXPECT_FALSE(cached_download_in(root(), url(), wrong, fast_options()).has_value());
  EXPECT_FALSE(fs::exists(cached_path(root(), url(), wrong)));
  // Nothing else to trust later either: no .part beside it.
  EXPECT_TRUE(fs::is_empty(cached_path(root(), url(), wrong).parent_path()));
}

TEST(CachedPath, OddUrlTailsGetAPlainName) {
  const std::string sha(64, 'b');
  EXPECT_EQ(cached_path("/c", "https://h/p/x.tar.gz?token=1#frag", sha).filename(), "x.tar.gz");
  EXPECT_EQ(cached_path("/c", "https://h/", sha).filename(), "download");
  EXPECT_EQ(cached_path("/c", "https://h/..", sha).filename(), "download");
  EXPECT_EQ(cached_path("/c", "https://h/a%2Fb", sha).filename(), "download");
}

}  // namespace
}  // namespace fabuild
