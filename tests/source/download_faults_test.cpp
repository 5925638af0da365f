// More ways a server or a network fails, each against the real libcurl transfer and a real
// misbehaving server on 127.0.0.1 (tests/support/http_server.py): retried, resumed or refused
// as each deserves, and never a partial or wrong file at the destination or in the cache.
// docs/reliability.md lists them with the older cases in download_test.cpp.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "served_file.h"
#include "source/cache.h"
#include "util/error.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::slurp_file;
using Clock = std::chrono::steady_clock;

class DownloadFaults : public test::ServedFileTest {
 protected:
  std::string failure(const std::string& path) {
    const Expected<DownloadResult> r = download(server_->url(path), dest(), fast_options());
    EXPECT_FALSE(r.has_value()) << path << " downloaded without an error";
    return r ? std::string() : r.error().what;
  }

  void expect_whole_file() {
    EXPECT_TRUE(slurp_file(dest()) == body_) << "the file at dest differs from what was served";
    EXPECT_FALSE(fs::exists(part()));
  }

  void expect_nothing_left() {
    EXPECT_FALSE(fs::exists(dest()));
    EXPECT_FALSE(fs::exists(part())) << "bytes that a later run could resume or trust";
  }
};

TEST_F(DownloadFaults, ServerThatNeverAnswersTimesOutAndIsRetried) {
  const auto start = Clock::now();
  fetched(server_->url("/silent-once/f"), fast_options());
  expect_whole_file();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(15)) << "the server sleeps 30 s; only the stall check ends it";
  ASSERT_EQ(server_->requests().size(), 2u);
}

TEST_F(DownloadFaults, EmptyReplyIsRetried) {
  fetched(server_->url("/hangup-once/f"), fast_options());
  expect_whole_file();
  EXPECT_EQ(server_->requests().size(), 2u);
}

TEST_F(DownloadFaults, ChunkedBodyCutMidChunkIsResumed) {
  const auto r = fetched(server_->url("/chunked-cut-once/f"), fast_options());
  expect_whole_file();
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].range, "bytes=" + std::to_string(body_.size() / 2 + 1000) + "-")
      << "the bytes that arrived are kept, the rest asked for";
  EXPECT_EQ(r.bytes_received, body_.size());
}

TEST_F(DownloadFaults, BodyLongerThanItsContentLengthIsRefusedByItsDigest) {
  const std::string error = failure("/excess/f");
  EXPECT_NE(error.find("sha256 mismatch"), std::string::npos) << error;
  expect_nothing_left();
}

TEST_F(DownloadFaults, PartialContentForOtherBytesIsNeverAppended) {
  const std::string error = failure("/wrong-range/f");
  EXPECT_NE(error.find("got HTTP 206 starting at 10"), std::string::npos) << error;
  EXPECT_NE(error.find("gave up after 3 attempts"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dest()));
  EXPECT_LE(fs::exists(part()) ? fs::file_size(part()) : 0, body_.size() / 2)
      << "bytes from the wrong offset were appended";
}

TEST_F(DownloadFaults, ErrorPageServedAs200IsRefusedByItsDigest) {
  const std::string error = failure("/error-page/f");
  EXPECT_NE(error.find("sha256 mismatch"), std::string::npos) << error;
  expect_nothing_left();
  EXPECT_EQ(server_->requests().size(), 1u) << "a digest mismatch is not retried";
}

TEST_F(DownloadFaults, RedirectToALocalFileIsRefused) {
  const std::string error = failure("/redirect-to-file/f");
  EXPECT_NE(error.find("download of"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dest()));
  EXPECT_EQ(server_->requests().size(), 1u) << "a refused protocol is not retried";
}

// Two processes (two fabuild runs sharing one cache) fetch the same sdist at once: one
// downloads, the other waits and uses the verified file; neither sees or leaves a mix.
TEST_F(DownloadFaults, TwoProcessesFillingOneCacheSlotGetOneVerifiedFile) {
  const fs::path root = scratch_.path() / "cache";
  const std::string url = server_->url("/slow/flash_attn-2.8.3.tar.gz");
  const DownloadOptions options = fast_options();
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        const Expected<fs::path> got = cached_download_in(root, url, body_sha256(), options);
        code = !got ? 4 : slurp_file(*got) == body_ ? 0 : 3;
      } catch (...) {
        code = 4;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  const fs::path cached = cached_path(root, url, body_sha256());
  EXPECT_TRUE(slurp_file(cached) == body_);
  EXPECT_EQ(server_->requests("/slow/").size(), 1u) << "the second process must reuse the first one's file";
  EXPECT_FALSE(fs::exists(cached.string() + ".part"));
}

}  // namespace
}  // namespace fabuild
