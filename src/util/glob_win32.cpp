#include <cstddef>

#include "util/text.h"

namespace fabuild {

namespace {

// One bracket expression at pattern[at] == '[': whether `c` is in it; `end` gets the index after
// its ']'. false with end == at when there is no closing ']' (then '[' is an ordinary character).
bool in_bracket(std::string_view pattern, std::size_t at, char c, std::size_t& end) {
  std::size_t i = at + 1;
  const bool negated = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
  if (negated) ++i;
  bool found = false;
  for (bool first = true; i < pattern.size() && (first || pattern[i] != ']'); first = false) {
    char low = pattern[i];
    if (low == '\\' && i + 1 < pattern.size()) low = pattern[++i];
    char high = low;
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      high = pattern[i + 2];
      if (high == '\\' && i + 3 < pattern.size()) high = pattern[++i + 2];
      i += 2;
    }
    if (low <= c && c <= high) found = true;
    ++i;
  }
  if (i >= pattern.size()) {
    end = at;
    return false;
  }
  end = i + 1;
  return found != negated;
}

}  // namespace

// fnmatch(3) with no flags, which Windows lacks: '*' any run of characters ('/' included), '?'
// one, "[a-c]" and "[!a-c]" sets, '\' quoting the next character. The tests in
// tests/util/text_test.cpp hold both platforms to the same answers.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star = std::string_view::npos;  // the last '*' seen, to retry from when a match fails
  std::size_t star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char c = pattern[p];
      if (c == '*') {
        star = p++;
        star_text = t;
        continue;
      }
      std::size_t end = p + 1;
      bool match = false;
      if (c == '?') {
        match = true;
      } else if (c == '[') {
        match = in_bracket(pattern, p, text[t], end);
        if (end == p) {  // no ']': an ordinary '['
          match = c == text[t];
          end = p + 1;
        }
      } else if (c == '\\' && p + 1 < pattern.size()) {
        match = pattern[p + 1] == text[t];
        end = p + 2;
      } else {
        match = c == text[t];
        end = p + 1;
      }
      if (match) {
        p = end;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    t = ++star_text;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace fabuild
