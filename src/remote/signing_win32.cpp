#include "remote/signing.h"

// A Windows build of fabuild links no OpenSSL (SHA-256 comes from the system's CNG, which has no
// Ed25519): signed row indexes are a Linux and macOS feature. Loading a key fails, saying so, and
// the run stops at its plan (a config error) rather than reading indexes it cannot check.
namespace fabuild::remote {

namespace {

Failure no_ed25519() {
  return Failure{"signed row indexes need Ed25519, which a Windows build of fabuild does not have",
                 "sign and verify on Linux or macOS, or leave cache.verify_keys and the signing key out here"};
}

}  // namespace

Expected<SigningKey> parse_signing_key(const std::string&) { return tl::make_unexpected(no_ed25519()); }
Expected<PublicKey> parse_public_key(const std::string&) { return tl::make_unexpected(no_ed25519()); }
Expected<std::string> sign(const SigningKey&, std::string_view) { return tl::make_unexpected(no_ed25519()); }
bool verify(const PublicKey&, std::string_view, const std::string&) { return false; }

}  // namespace fabuild::remote
