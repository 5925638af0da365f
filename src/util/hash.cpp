#include "util/hash.h"

#include <fstream>
#include <vector>

// The digest itself is the platform's (hash_posix.cpp: OpenSSL; hash_win32.cpp: Windows CNG).
namespace fabuild {

Sha256 sha256_of(std::string_view bytes) {
  Sha256Hasher h;
  h.update(bytes);
  return h.finish();
}

Expected<Sha256> sha256_of_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read " + path.string());
  Sha256Hasher h;
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    h.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) return fail("error reading " + path.string());
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
  std::string out = base64(digest);
  for (auto& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

}  // namespace fabuild
