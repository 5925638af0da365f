#include "remote/signing.h"

#include <fmt/format.h>

#include "util/hash.h"

namespace fabuild::remote {

namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ','; }

}  // namespace

std::string index_message(const std::string& row_key, const std::string& writer, const std::string& objects_json) {
  return "fabuild row index 1\n" + row_key + "\n" + writer + "\n" + objects_json;
}

Expected<std::vector<PublicKey>> parse_public_keys(const std::string& text) {
  std::vector<PublicKey> keys;
  std::size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && is_space(text[at])) ++at;
    if (at >= text.size()) break;
    std::size_t end;
    if (text.compare(at, 11, "-----BEGIN ") == 0) {  // a PEM block, to its END line
      const std::size_t end_line = text.find("-----END ", at);
      const std::size_t close = end_line == std::string::npos ? end_line : text.find("-----", end_line + 9);
      if (close == std::string::npos) return fail("a PEM block without its END line", "paste the whole key");
      end = close + 5;
    } else {
      end = at;
      while (end < text.size() && !is_space(text[end])) ++end;
    }
    auto key = parse_public_key(text.substr(at, end - at));
    if (!key) return tl::make_unexpected(key.error());
    keys.push_back(std::move(*key));
    at = end;
  }
  if (keys.empty()) return fail("no public key in it", "`openssl pkey -in KEY.pem -pubout` prints one");
  return keys;
}

PublicKey public_key_of(std::string raw) {
  PublicKey key;
  key.id = hex(sha256_of(raw)).substr(0, 16);
  key.raw = std::move(raw);
  return key;
}

}  // namespace fabuild::remote
