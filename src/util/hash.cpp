#include "util/hash.h"

#include <openssl/evp.h>

#include <fstream>
#include <stdexcept>
#include <vector>

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

Sha256 sha256_of(std::string_view bytes) {
  Sha256Hasher h;
  h.update(bytes);
  return h.finish();
}

Sha256 sha256_of_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  Sha256Hasher h;
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    h.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) throw std::runtime_error("error reading " + path.string());
  return h.finish();
}

std::string hex(const Sha256& digest) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (auto b : digest) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string base64url_nopad(const Sha256& digest) {
  unsigned char encoded[64] = {};
  const int n = EVP_EncodeBlock(encoded, digest.data(), static_cast<int>(digest.size()));
  std::string out(reinterpret_cast<char*>(encoded), static_cast<std::size_t>(n));
  for (auto& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

}  // namespace fabuild
