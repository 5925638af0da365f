#include "util/read_whole.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fabuild {

std::optional<std::string> read_whole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return buffer.str();
}

std::string read_tail(const std::filesystem::path& path, std::uintmax_t offset, std::uintmax_t most) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::uintmax_t>(std::max<std::streamoff>(0, in.tellg()));
  const std::uintmax_t from = std::max(offset, size > most ? size - most : 0);
  if (from >= size) return {};
  std::string text(size - from, '\0');
  in.seekg(static_cast<std::streamoff>(from));
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace fabuild
