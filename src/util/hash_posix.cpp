#include <openssl/evp.h>

#include <stdexcept>

#include "util/hash.h"

// SHA-256 and base64 from OpenSSL's libcrypto (also linked statically into fabuild-cc).
namespace fabuild {

Sha256Hasher::Sha256Hasher() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL: cannot start a SHA-256 digest");
  }
}

Sha256Hasher::~Sha256Hasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256Hasher::update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

Sha256 Sha256Hasher::finish() {
  Sha256 digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), digest.data(), &length);
  return digest;
}

std::string base64(const Sha256& digest) {
  unsigned char encoded[64] = {};
  const int n = EVP_EncodeBlock(encoded, digest.data(), static_cast<int>(digest.size()));
  return std::string(reinterpret_cast<char*>(encoded), static_cast<std::size_t>(n));
}

}  // namespace fabuild
