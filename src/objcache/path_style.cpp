// Windows spellings on a command line (command_line.h): absolute paths and response files.
#include <cctype>

#include "objcache/command_line.h"

namespace fabuild::objcache {

PathStyle host_path_style() {
#ifdef _WIN32
  return PathStyle::kWindows;
#else
  return PathStyle::kPosix;
#endif
}

bool is_absolute_path(PathStyle style, const std::string& path) {
  if (path.starts_with('/')) return true;
  if (style == PathStyle::kPosix) return false;
  if (path.starts_with('\\')) return true;  // \\host\share, or \x on the working directory's drive
  return path.size() >= 3 && std::isalpha(static_cast<unsigned char>(path[0])) != 0 && path[1] == ':' &&
         (path[2] == '\\' || path[2] == '/');
}

std::vector<std::string> split_response_file(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      std::size_t n = 0;
      while (i + n < text.size() && text[i + n] == '\\') ++n;
      const bool before_quote = i + n < text.size() && text[i + n] == '"';
      word.append(before_quote ? n / 2 : n, '\\');
      in_word = true;
      i += n - 1;
      if (before_quote && n % 2 == 1) {
        word += '"';
        ++i;  // the escaped quote
      }
      continue;
    }
    if (c == '"') {
      quoted = !quoted;
      in_word = true;
      continue;
    }
    if (!quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    word += c;
    in_word = true;
  }
  if (in_word) out.push_back(word);
  return out;
}

}  // namespace fabuild::objcache
