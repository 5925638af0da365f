#pragma once

// SHA-256 (OpenSSL on POSIX, Windows CNG on Windows), in the spellings packaging uses.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace fabuild {

using Sha256 = std::array<std::uint8_t, 32>;

class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;
  void update(std::string_view bytes);
  Sha256 finish();

 private:
  void* ctx_;  // OpenSSL's EVP_MD_CTX, or the CNG handles
};

Sha256 sha256_of(std::string_view bytes);
// A Failure naming the file when it cannot be read.
Expected<Sha256> sha256_of_file(const std::filesystem::path& path);

std::string hex(const Sha256& digest);              // SHA256SUMS, pip's --hash, #sha256= fragments
std::string base64url_nopad(const Sha256& digest);  // wheel RECORD files (PEP 376/427)
std::string base64(const Sha256& digest);           // standard alphabet, padded

}  // namespace fabuild
