// Signed row indexes (remote/signing.h): Ed25519 keys as OpenSSL writes them, signatures that
// hold only for the message, row and writer they were made for, and a fetch that uses only
// indexes an accepted key signed, against Debian's nginx (tests/support/nginx.h).

#include "remote/signing.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/nginx.h"
#include "../support/scratch_dir.h"
#include "remote/sync.h"
#include "remote_support.h"
#include "util/read_whole.h"

namespace fabuild::remote {
namespace {

using namespace std::chrono_literals;

// Test keys, made with `openssl genpkey -algorithm ed25519` and `openssl pkey -pubout`.
const std::string kPrivate1 =
    "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIHhyeiNe1RXmxuebwK7kuRAcR9376xyR3BXmVbzfEHAm\n"
    "-----END PRIVATE KEY-----\n";
const std::string kPublic1 = "MCowBQYDK2VwAyEASVwE0yhv8efHWK3S9naXdxqjXg5kyEUcVDorVt0vKuE=";
const std::string kPrivate2 =
    "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAKQjUyPOk6C4QaPbQGDCFqJrt5+UdtEa2bMUndfKAb2\n"
    "-----END PRIVATE KEY-----\n";
const std::string kPublic2Pem =
    "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAKYw9WcDDj7+nQzGT38cKIpX5LPaF2iUS8F908k0StWI=\n-----END PUBLIC "
    "KEY-----\n";

TEST(Signing, AKeyAndItsPublicHalfAgreeOnTheId) {
  const auto priv = parse_signing_key(kPrivate1);
  ASSERT_TRUE(priv) << priv.error().what;
  const auto pub = parse_public_key(kPublic1);
  ASSERT_TRUE(pub) << pub.error().what;
  EXPECT_EQ(priv->pub.id, pub->id);
  EXPECT_EQ(pub->id.size(), 16u);
  EXPECT_EQ(pub->raw.size(), 32u);
  const auto both = parse_public_keys(kPublic1 + ",\n" + kPublic2Pem);
  ASSERT_TRUE(both) << both.error().what;
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].id, pub->id);
  EXPECT_EQ((*both)[1].id, parse_signing_key(kPrivate2)->pub.id);
}

TEST(Signing, ASignatureHoldsForItsMessageAndKeyOnly) {
  const SigningKey key = parse_signing_key(kPrivate1).value();
  const std::string message = index_message("row", "cp312", R"({"results/ab/cd":"ef"})");
  const auto signature = sign(key, message);
  ASSERT_TRUE(signature) << signature.error().what;
  EXPECT_TRUE(verify(key.pub, message, *signature));
  EXPECT_FALSE(verify(key.pub, index_message("row2", "cp312", R"({"results/ab/cd":"ef"})"), *signature));
  EXPECT_FALSE(verify(key.pub, index_message("row", "cp313", R"({"results/ab/cd":"ef"})"), *signature));
  EXPECT_FALSE(verify(key.pub, index_message("row", "cp312", R"({"results/ab/cd":"e0"})"), *signature));
  EXPECT_FALSE(verify(parse_signing_key(kPrivate2)->pub, message, *signature));
  EXPECT_FALSE(verify(key.pub, message, "not base64!"));
  EXPECT_FALSE(verify(key.pub, message, ""));
}

TEST(Signing, WhatIsNotAKeyIsSaidToBeNone) {
  EXPECT_NE(parse_signing_key("hello").error().what.find("is not a PEM private key"), std::string::npos);
  EXPECT_NE(parse_signing_key(kPublic2Pem).error().what.find("is not a PEM private key"), std::string::npos);
  EXPECT_NE(parse_public_key("AAAA").error().what.find("'AAAA' is not a public key"), std::string::npos);
  EXPECT_NE(parse_public_keys(" , ").error().what.find("no public key"), std::string::npos);
  EXPECT_NE(parse_public_keys("-----BEGIN PUBLIC KEY-----\nMCow").error().what.find("without its END line"),
            std::string::npos);
}

class SignedIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::Nginx::binary().empty()) GTEST_SKIP() << "nginx is not installed (scripts/install-deps.sh --tests)";
    ASSERT_TRUE(server_.start()) << read_whole(server_.error_log()).value_or("no error log");
    store_ = http_store(server_.url("/cache"), "");
    signer_.signer = parse_signing_key(kPrivate1).value();
    signer_.accepted = {signer_.signer->pub};
    reader_.accepted = {parse_public_key(kPublic1).value()};
    EXPECT_TRUE(reader_cache_.prepare());
  }
  test::ScratchDir scratch_{"fabuild-signed"};
  test::Nginx server_{scratch_.path() / "nginx"};
  objcache::Store writer_cache_{scratch_.path() / "writer"};
  objcache::Store reader_cache_{scratch_.path() / "reader"};
  std::unique_ptr<Store> store_;
  IndexTrust signer_, reader_;
  const std::string row_ = std::string(64, 'a');
};

TEST_F(SignedIndexTest, ASignedIndexIsUsedAndAnUnsignedOrForgedOneIsRefused) {
  const auto used = fill(writer_cache_, 2);
  const SyncTally pushed = push_row(*store_, writer_cache_, row_, "cp312", used, 30s, {}, &signer_);
  ASSERT_TRUE(pushed.notes.empty()) << pushed.notes.front();
  const auto index = nlohmann::json::parse(store_->get(index_key(row_, "cp312")).value().value());
  EXPECT_EQ(index["signature"]["key"], signer_.signer->pub.id);

  const SyncTally taken = fetch_row(*store_, reader_cache_, row_, {"cp312"}, 30s, &reader_);
  EXPECT_EQ(taken.objects, 4u);
  EXPECT_EQ(taken.indexes_refused, 0u);

  // A writer without the key points a result at another valid blob: the index no longer verifies.
  nlohmann::json forged = index;
  auto& objects = forged["objects"];
  std::string first, other;
  for (const auto& [path, sha] : objects.items()) {
    if (!path.starts_with("results/")) continue;
    (first.empty() ? first : other) = first.empty() ? path : sha.get<std::string>();
  }
  objects[first] = other;
  ASSERT_TRUE(store_->put(index_key(row_, "cp312"), forged.dump()));
  objcache::Store fresh(scratch_.path() / "fresh");
  EXPECT_TRUE(fresh.prepare());
  const SyncTally refused = fetch_row(*store_, fresh, row_, {"cp312"}, 30s, &reader_);
  EXPECT_EQ(refused.objects, 0u);
  EXPECT_EQ(refused.indexes_refused, 1u);
  ASSERT_EQ(refused.notes.size(), 1u);
  EXPECT_NE(refused.notes[0].find("refused the row index"), std::string::npos);
  EXPECT_NE(refused.notes[0].find("does not verify for this row and writer"), std::string::npos) << refused.notes[0];
  // Verification off: the same forged index is used (what the signature stops).
  EXPECT_EQ(fetch_row(*store_, fresh, row_, {"cp312"}, 30s, nullptr).objects, 4u);

  // Unsigned, and signed by a key the reader does not accept.
  forged.erase("signature");
  ASSERT_TRUE(store_->put(index_key(row_, "cp312"), forged.dump()));
  objcache::Store fresh2(scratch_.path() / "fresh2");
  EXPECT_TRUE(fresh2.prepare());
  const SyncTally unsigned_ = fetch_row(*store_, fresh2, row_, {"cp312"}, 30s, &reader_);
  EXPECT_NE(unsigned_.notes.at(0).find("it is not signed"), std::string::npos);
  IndexTrust other_key;
  other_key.signer = parse_signing_key(kPrivate2).value();
  ASSERT_TRUE(push_row(*store_, writer_cache_, row_, "cp313", used, 30s, {}, &other_key).notes.empty());
  const SyncTally unknown = fetch_row(*store_, fresh2, row_, {"cp313"}, 30s, &reader_);
  EXPECT_NE(unknown.notes.at(0).find("which is not one this run accepts"), std::string::npos);
  // Keys rotate: a reader that accepts both takes it.
  IndexTrust both = reader_;
  both.accepted.push_back(parse_public_key(kPublic2Pem).value());
  EXPECT_EQ(fetch_row(*store_, fresh2, row_, {"cp313"}, 30s, &both).indexes_refused, 0u);
}

TEST_F(SignedIndexTest, AnIndexCopiedToAnotherRowDoesNotVerifyThereAndATrustedPushReplacesIt) {
  const auto used = fill(writer_cache_, 1);
  ASSERT_TRUE(push_row(*store_, writer_cache_, row_, "cp312", used, 30s, {}, &signer_).notes.empty());
  const std::string other_row(64, 'b');
  ASSERT_TRUE(store_->put(index_key(other_row, "cp312"), store_->get(index_key(row_, "cp312")).value().value()));
  const SyncTally t = fetch_row(*store_, reader_cache_, other_row, {"cp312"}, 30s, &reader_);
  EXPECT_EQ(t.indexes_refused, 1u);
  EXPECT_EQ(t.objects, 0u);
  // The trusted writer of that row pushes: the copied index is replaced by one it signs.
  const SyncTally pushed = push_row(*store_, writer_cache_, other_row, "cp312", used, 30s, {}, &signer_);
  EXPECT_EQ(pushed.indexes_refused, 1u);
  objcache::Store fresh(scratch_.path() / "fresh");
  EXPECT_TRUE(fresh.prepare());
  EXPECT_EQ(fetch_row(*store_, fresh, other_row, {"cp312"}, 30s, &reader_).objects, 2u);
}

}  // namespace
}  // namespace fabuild::remote
