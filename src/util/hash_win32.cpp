#include <windows.h>
// After windows.h:
#include <bcrypt.h>
#include <wincrypt.h>

#include <stdexcept>

#include <fmt/format.h>

#include "util/hash.h"

// SHA-256 from Windows' CNG (BCrypt) and base64 from CryptoAPI: the system's own, so the
// Windows build carries no OpenSSL.
namespace fabuild {

namespace {

struct Cng {
  BCRYPT_ALG_HANDLE algorithm = nullptr;
  BCRYPT_HASH_HANDLE hash = nullptr;
};

void check(NTSTATUS status, const char* call) {
  if (status < 0) throw std::runtime_error(fmt::format("{}: NTSTATUS 0x{:08X}", call, static_cast<unsigned>(status)));
}

}  // namespace

Sha256Hasher::Sha256Hasher() : ctx_(new Cng) {
  auto* cng = static_cast<Cng*>(ctx_);
  // The system refusing SHA-256 is a broken host, not a user's mistake: the exception unwinds
  // to main. What was made so far is released first, since no destructor runs for a
  // constructor that throws.
  const char* call = "BCryptOpenAlgorithmProvider(SHA256)";
  NTSTATUS status = BCryptOpenAlgorithmProvider(&cng->algorithm, BCRYPT_SHA256_ALGORITHM, nullptr, 0);
  if (status >= 0) {
    call = "BCryptCreateHash";
    status = BCryptCreateHash(cng->algorithm, &cng->hash, nullptr, 0, nullptr, 0, 0);
  }
  if (status < 0) {
    this->~Sha256Hasher();
    check(status, call);
  }
}

Sha256Hasher::~Sha256Hasher() {
  auto* cng = static_cast<Cng*>(ctx_);
  if (cng == nullptr) return;
  if (cng->hash != nullptr) BCryptDestroyHash(cng->hash);
  if (cng->algorithm != nullptr) BCryptCloseAlgorithmProvider(cng->algorithm, 0);
  delete cng;
  ctx_ = nullptr;
}

void Sha256Hasher::update(std::string_view bytes) {
  auto* cng = static_cast<Cng*>(ctx_);
  // BCryptHashData takes a ULONG length: large inputs go in slices.
  while (!bytes.empty()) {
    const auto n = static_cast<ULONG>(std::min<std::size_t>(bytes.size(), 1U << 30));
    check(BCryptHashData(cng->hash, reinterpret_cast<PUCHAR>(const_cast<char*>(bytes.data())), n, 0), "BCryptHashData");
    bytes.remove_prefix(n);
  }
}

Sha256 Sha256Hasher::finish() {
  Sha256 digest{};
  check(BCryptFinishHash(static_cast<Cng*>(ctx_)->hash, digest.data(), static_cast<ULONG>(digest.size()), 0),
        "BCryptFinishHash");
  return digest;
}

std::string base64(const Sha256& digest) {
  char encoded[64] = {};
  DWORD size = sizeof encoded;
  if (!CryptBinaryToStringA(digest.data(), static_cast<DWORD>(digest.size()), CRYPT_STRING_BASE64 | CRYPT_STRING_NOCRLF,
                            encoded, &size)) {
    throw std::runtime_error(fmt::format("CryptBinaryToStringA: error {}", GetLastError()));
  }
  return std::string(encoded, size);
}

}  // namespace fabuild
