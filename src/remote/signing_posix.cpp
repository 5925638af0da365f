#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "remote/signing.h"

// Ed25519 through OpenSSL's libcrypto (EVP_PKEY_ED25519), which fabuild links on POSIX.
namespace fabuild::remote {

namespace {

using Pkey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

Expected<std::string> raw_of(EVP_PKEY* key, bool private_part) {
  if (EVP_PKEY_id(key) != EVP_PKEY_ED25519) return fail("not an Ed25519 key", "`openssl genpkey -algorithm ed25519`");
  std::string raw(32, '\0');
  std::size_t n = raw.size();
  const int ok = private_part ? EVP_PKEY_get_raw_private_key(key, reinterpret_cast<unsigned char*>(raw.data()), &n)
                              : EVP_PKEY_get_raw_public_key(key, reinterpret_cast<unsigned char*>(raw.data()), &n);
  if (ok != 1 || n != 32) return fail("OpenSSL could not read the key's bytes");
  return raw;
}

std::string base64_of(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> bytes_of_base64(const std::string& text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  std::size_t pad = 0;
  while (pad < 2 && text[text.size() - 1 - pad] == '=') ++pad;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

}  // namespace

Expected<SigningKey> parse_signing_key(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  Pkey key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr, &EVP_PKEY_free);
  if (!key) {
    return fail("is not a PEM private key",
                "make one with `openssl genpkey -algorithm ed25519 -out signing.pem` and put the file's text in it");
  }
  auto priv = raw_of(key.get(), true);
  if (!priv) return tl::make_unexpected(priv.error());
  auto pub = raw_of(key.get(), false);
  if (!pub) return tl::make_unexpected(pub.error());
  return SigningKey{public_key_of(std::move(*pub)), std::move(*priv)};
}

Expected<PublicKey> parse_public_key(const std::string& text) {
  Pkey key(nullptr, &EVP_PKEY_free);
  if (text.starts_with("-----BEGIN")) {
    Bio bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), &BIO_free);
    key.reset(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  } else if (const auto der = bytes_of_base64(text)) {
    const auto* p = reinterpret_cast<const unsigned char*>(der->data());
    key.reset(d2i_PUBKEY(nullptr, &p, static_cast<long>(der->size())));
  }
  const std::string shown = text.size() > 24 ? text.substr(0, 24) + "..." : text;
  if (!key) {
    return fail("'" + shown + "' is not a public key",
                "`openssl pkey -in signing.pem -pubout` prints one: its PEM, or the base64 line inside it");
  }
  auto raw = raw_of(key.get(), false);
  if (!raw) return fail("'" + shown + "' " + raw.error().what, raw.error().hint);
  return public_key_of(std::move(*raw));
}

Expected<std::string> sign(const SigningKey& key, std::string_view message) {
  Pkey pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                         reinterpret_cast<const unsigned char*>(key.raw.data()), key.raw.size()),
            &EVP_PKEY_free);
  MdCtx ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  std::string signature(64, '\0');
  std::size_t n = signature.size();
  if (!pkey || !ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &n,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1) {
    return fail("OpenSSL could not sign with key " + key.pub.id);
  }
  signature.resize(n);
  return base64_of(signature);
}

bool verify(const PublicKey& key, std::string_view message, const std::string& signature) {
  const auto sig = bytes_of_base64(signature);
  if (!sig || sig->size() != 64) return false;
  Pkey pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                        reinterpret_cast<const unsigned char*>(key.raw.data()), key.raw.size()),
            &EVP_PKEY_free);
  MdCtx ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  return pkey && ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) == 1 &&
         EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()), sig->size(),
                          reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

}  // namespace fabuild::remote
