#pragma once

// Signed row indexes (docs/security.md): a writer that holds an Ed25519 private key signs each
// row index it sends; a reader that holds public keys uses only indexes whose signature one of
// them verifies. The signature covers the index's objects, the row key and the writer's name,
// so an index copied to another row or writer does not verify. A content address (cas/<sha256>)
// proves a blob is the one named; only the signature proves who named it for a compile's key.
//
// Keys are OpenSSL's: `openssl genpkey -algorithm ed25519` makes a private key (PEM),
// `openssl pkey -pubout` its public key (PEM; its base64 line alone is accepted too). A key's id
// is the first 16 hex digits of the SHA-256 of its 32 raw bytes: the index names the key that
// signed it, so that several keys can be accepted while one is rotated out.
//
// A Windows build of fabuild has no OpenSSL (util/hash_win32.cpp): there, loading a key fails,
// saying so.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace fabuild::remote {

struct PublicKey {
  std::string id;   // 16 hex digits
  std::string raw;  // 32 bytes
};

struct SigningKey {
  PublicKey pub;
  std::string raw;  // the 32-byte private key
};

// A private key from its PEM text (PKCS#8, as `openssl genpkey` writes it).
Expected<SigningKey> parse_signing_key(const std::string& pem);
// A public key from PEM, or the base64 of its DER form (the PEM's body, one line).
Expected<PublicKey> parse_public_key(const std::string& text);
// Every public key in `text`: PEM blocks, or base64 lines separated by spaces, commas or newlines.
Expected<std::vector<PublicKey>> parse_public_keys(const std::string& text);

// The Ed25519 signature of `message`, base64.
Expected<std::string> sign(const SigningKey& key, std::string_view message);
// Whether `signature` (base64) is `key`'s of `message`.
bool verify(const PublicKey& key, std::string_view message, const std::string& signature);

// A public key from its 32 raw bytes, with its id.
PublicKey public_key_of(std::string raw);

// What a row index's signature covers: the index's objects (JSON text, keys sorted), the row key
// and the writer.
std::string index_message(const std::string& row_key, const std::string& writer, const std::string& objects_json);

// A run's keys: the one it signs with (a trusted writer), the ones it accepts. No verify keys:
// every index is used, as without signing.
struct IndexTrust {
  std::optional<SigningKey> signer;
  std::vector<PublicKey> accepted;
  [[nodiscard]] bool verifying() const { return !accepted.empty(); }
  [[nodiscard]] const PublicKey* find(const std::string& id) const {
    for (const auto& k : accepted) {
      if (k.id == id) return &k;
    }
    return nullptr;
  }
};

}  // namespace fabuild::remote
