#include "source/download.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sstream>

#include <chrono>
#include <filesystem>

#include "served_file.h"
#include "util/error.h"

// Real libcurl against a real (misbehaving) server on 127.0.0.1: tests/support/http_server.py.
namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::slurp_file;
using test::write_file;
using Clock = std::chrono::steady_clock;

class DownloadTest : public test::ServedFileTest {
 protected:
  std::string failure(const std::string& path, const DownloadOptions& options) {
    return failure_of(server_->url(path), options);
  }

  void expect_good_result(const DownloadResult& r) {
    EXPECT_EQ(r.path, dest());
    EXPECT_EQ(r.sha256, body_sha256());
    EXPECT_EQ(r.size, body_.size());
    EXPECT_TRUE(slurp_file(dest()) == body_) << "the file at dest differs from what was served";
    EXPECT_FALSE(fs::exists(part()));
  }
};

TEST_F(DownloadTest, GoodFileIsVerifiedAndPublished) {
  const auto r = fetched(server_->url("/good/f"), fast_options());
  expect_good_result(r);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.bytes_received, body_.size());
}

TEST_F(DownloadTest, UppercaseSha256IsAccepted) {
  auto options = fast_options();
  for (auto& c : *options.expected_sha256) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  expect_good_result(fetched(server_->url("/good/f"), options));
}

TEST_F(DownloadTest, WrongSha256IsRefusedAndLeavesNothing) {
  const std::string error = failure("/bad-sha/f", fast_options());
  EXPECT_NE(error.find("sha256 mismatch"), std::string::npos) << error;
  EXPECT_NE(error.find("expected " + body_sha256()), std::string::npos) << error;
  EXPECT_NE(error.find("got "), std::string::npos) << error;
  EXPECT_NE(error.find("/bad-sha/f"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dest()));
  EXPECT_FALSE(fs::exists(part())) << "a .part with the wrong bytes would be resumed next time";
  EXPECT_EQ(server_->requests().size(), 1u) << "a mismatch is not retried";
}

TEST_F(DownloadTest, FailedDownloadKeepsThePreviousFileAtDest) {
  fs::create_directories(dest().parent_path());
  write_file(dest(), "the previous, verified file");
  (void)failure("/bad-sha/f", fast_options());
  EXPECT_EQ(slurp_file(dest()), "the previous, verified file");
}

TEST_F(DownloadTest, DropMidwayIsResumedWithRange) {
  const auto r = fetched(server_->url("/drop-once/f"), fast_options());
  expect_good_result(r);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].range, "-");
  EXPECT_EQ(requests[1].range.rfind("bytes=", 0), 0u) << requests[1].range;
  EXPECT_NE(requests[1].range, "bytes=0-") << "the resumed request must skip what arrived";
  EXPECT_LT(r.bytes_received, 2 * body_.size());
}

TEST_F(DownloadTest, ShortBodyIsAnErrorThenResumed) {
  const auto r = fetched(server_->url("/short/f"), fast_options());
  expect_good_result(r);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].range, "bytes=" + std::to_string(body_.size() / 2) + "-");
  EXPECT_EQ(r.bytes_received, body_.size());
}

TEST_F(DownloadTest, ServiceUnavailableThenOkIsRetried) {
  const auto r = fetched(server_->url("/503-then-200/f"), fast_options());
  expect_good_result(r);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(server_->requests().size(), 2u);
}

TEST_F(DownloadTest, TooManyRequestsThenOkIsRetried) {
  expect_good_result(fetched(server_->url("/429-then-200/f"), fast_options()));
  EXPECT_EQ(server_->requests().size(), 2u);
}

TEST_F(DownloadTest, AlwaysUnavailableGivesUpAfterMaxAttempts) {
  const std::string error = failure("/always-503/f", fast_options());
  EXPECT_NE(error.find("HTTP 503"), std::string::npos) << error;
  EXPECT_NE(error.find("gave up after 3 attempts"), std::string::npos) << error;
  EXPECT_NE(error.find(server_->url("/always-503/f")), std::string::npos) << error;
  EXPECT_NE(error.find("try again later"), std::string::npos) << error;
  EXPECT_EQ(server_->requests().size(), 3u);
  EXPECT_FALSE(fs::exists(dest()));
}

TEST_F(DownloadTest, NotFoundFailsAtOnceWithoutRetries) {
  const std::string error = failure("/404/f", fast_options());
  EXPECT_NE(error.find("HTTP 404"), std::string::npos) << error;
  EXPECT_NE(error.find("may not exist"), std::string::npos) << error;
  EXPECT_EQ(server_->requests().size(), 1u);
  EXPECT_FALSE(fs::exists(dest()));
  EXPECT_FALSE(fs::exists(part()));
}

TEST_F(DownloadTest, StallTimesOutAndIsResumed) {
  const auto start = Clock::now();
  const auto r = fetched(server_->url("/stall/f"), fast_options());
  expect_good_result(r);
  // The server sleeps 30 s; only the stall check can end the first request this early.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(15));
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].range, "bytes=100-");
}

// A server that goes quiet is named once, long before the stall check gives up on it.
TEST_F(DownloadTest, AQuietServerIsNamedBeforeTheStallCheckEndsTheAttempt) {
  std::ostringstream said;
  const auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(said);
  spdlog::default_logger()->sinks().push_back(sink);
  auto options = fast_options();
  options.stall_time = std::chrono::seconds(3);
  options.quiet_notice = std::chrono::seconds(1);
  expect_good_result(fetched(server_->url("/stall/f"), options));
  spdlog::default_logger()->sinks().pop_back();
  EXPECT_NE(said.str().find("/stall/f: nothing received for 1 s; this attempt is given up after 3 s without data "
                            "and retried"),
            std::string::npos)
      << said.str();
}

TEST_F(DownloadTest, ServerIgnoringRangeRestartsFromZero) {
  const auto r = fetched(server_->url("/no-range/f"), fast_options());
  expect_good_result(r);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(requests[1].range, "-") << "it must have asked to resume";
  EXPECT_EQ(r.bytes_received, body_.size() / 2 + body_.size()) << "the half, then the whole again";
}

TEST_F(DownloadTest, RangeNotSatisfiableRestartsFromZero) {
  expect_good_result(fetched(server_->url("/range-416/f"), fast_options()));
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_NE(requests[1].range, "-");
  EXPECT_EQ(requests[2].range, "-") << "after a 416 the download starts over without Range";
}

TEST_F(DownloadTest, RedirectIsFollowed) {
  expect_good_result(fetched(server_->url("/redirect/f"), fast_options()));
  EXPECT_EQ(server_->requests("/good/").size(), 1u);
}

TEST_F(DownloadTest, RedirectLoopIsAnErrorNotRetried) {
  const std::string error = failure("/redirect-loop/f", fast_options());
  EXPECT_NE(error.find("redirect loop"), std::string::npos) << error;
  EXPECT_EQ(server_->requests().size(), static_cast<std::size_t>(kMaxRedirects + 1));
  EXPECT_FALSE(fs::exists(dest()));
}

TEST_F(DownloadTest, StreamedBodyOverTheLimitIsRefused) {
  auto options = fast_options();
  options.max_bytes = 64 * 1024;
  const std::string error = failure("/huge/f", options);
  EXPECT_NE(error.find("larger than the limit of 65536 bytes"), std::string::npos) << error;
  EXPECT_EQ(server_->requests().size(), 1u);
  EXPECT_FALSE(fs::exists(dest()));
  EXPECT_FALSE(fs::exists(part()));
}

TEST_F(DownloadTest, AnnouncedBodyOverTheLimitIsRefused) {
  auto options = fast_options();
  options.max_bytes = 64 * 1024;
  const std::string error = failure("/huge-declared/f", options);
  EXPECT_NE(error.find("more than the limit of 65536 bytes"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(part()));
}

TEST_F(DownloadTest, ConnectionRefusedIsRetriedThenReported) {
  // A port that was free a moment ago and that nobody listens on.
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(s);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/good/f";
  const std::string error = failure_of(url, fast_options());
  EXPECT_NE(error.find("gave up after 3 attempts"), std::string::npos) << error;
  EXPECT_NE(error.find(url), std::string::npos) << error;
}

TEST_F(DownloadTest, PartFromAnEarlierRunIsResumed) {
  fs::create_directories(dest().parent_path());
  write_file(part(), body_.substr(0, 1000));
  const auto r = fetched(server_->url("/good/f"), fast_options());
  expect_good_result(r);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].range, "bytes=1000-");
  EXPECT_EQ(r.bytes_received, body_.size() - 1000);
}

TEST_F(DownloadTest, StalePartThatFailsVerificationIsDownloadedWhole) {
  fs::create_directories(dest().parent_path());
  write_file(part(), std::string(1000, 'x'));  // a prefix of some other file
  expect_good_result(fetched(server_->url("/good/f"), fast_options()));
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].range, "bytes=1000-");
  EXPECT_EQ(requests[1].range, "-");
}

TEST_F(DownloadTest, WithoutSha256AnEarlierPartIsNotTrusted) {
  fs::create_directories(dest().parent_path());
  write_file(part(), std::string(1000, 'x'));
  auto options = fast_options();
  options.expected_sha256.reset();
  expect_good_result(fetched(server_->url("/good/f"), options));
  ASSERT_EQ(server_->requests().size(), 1u);
  EXPECT_EQ(server_->requests()[0].range, "-");
}

TEST_F(DownloadTest, CredentialsNeverAppearInErrors) {
  const std::string url = "http://alice:s3cret@" + server_->url("/404/f").substr(7);
  const std::string error = failure_of(url, fast_options());
  EXPECT_EQ(error.find("s3cret"), std::string::npos) << error;
  EXPECT_NE(error.find("http://***@127.0.0.1"), std::string::npos) << error;
}

TEST_F(DownloadTest, MalformedSha256IsAConfigurationError) {
  auto options = fast_options();
  options.expected_sha256 = "abc123";
  try {
    (void)download(server_->url("/good/f"), dest(), options);
    ADD_FAILURE() << "a malformed sha256 was accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), kExitBadConfig);
    EXPECT_NE(e.message().find("'abc123' is not a SHA-256"), std::string::npos) << e.message();
  }
  EXPECT_TRUE(server_->requests().empty()) << "nothing to fetch before the pin is valid";
}

TEST(RedactUrl, HidesUserInfoOnly) {
  EXPECT_EQ(redact_url("https://user:pass@example.org/simple/"), "https://***@example.org/simple/");
  EXPECT_EQ(redact_url("https://token@example.org"), "https://***@example.org");
  EXPECT_EQ(redact_url("https://u:p@ss@example.org/x"), "https://***@example.org/x");
  EXPECT_EQ(redact_url("https://example.org/a@b"), "https://example.org/a@b");
  EXPECT_EQ(redact_url("not a url"), "not a url");
}

}  // namespace
}  // namespace fabuild
