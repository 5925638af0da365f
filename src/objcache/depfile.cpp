#include "objcache/depfile.h"

#include <set>

namespace fabuild::objcache {

namespace {

// Words of the rule with escapes undone; a word that ends the target carries a trailing ':'.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  const auto end_word = [&] {
    if (in_word) out.push_back(word);
    word.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      const char next = text[i + 1];
      if (next == '\n' || (next == '\r' && i + 2 < text.size() && text[i + 2] == '\n')) {
        i += next == '\r' ? 2 : 1;
        end_word();
        continue;
      }
      if (next == ' ' || next == '#' || next == '\\') {
        word += next;
        in_word = true;
        ++i;
        continue;
      }
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      word += '$';
      in_word = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      end_word();
      continue;
    }
    word += c;
    in_word = true;
  }
  end_word();
  return out;
}

std::string escape(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

}  // namespace

std::optional<Depfile> parse_depfile(const std::string& text) {
  const std::vector<std::string> w = words(text);
  Depfile d;
  std::size_t i = 0;
  // The target ends at the first word that ends with ':' (or is ':' on its own).
  for (; i < w.size(); ++i) {
    if (w[i] == ":") break;
    if (w[i].ends_with(':')) {
      d.target += (d.target.empty() ? "" : " ") + w[i].substr(0, w[i].size() - 1);
      break;
    }
    d.target += (d.target.empty() ? "" : " ") + w[i];
  }
  if (i >= w.size() || d.target.empty()) return std::nullopt;
  std::set<std::string> seen;
  for (++i; i < w.size(); ++i) {
    // A second rule (-MP's "header.h:") ends the first; fabuild-cc never asks for those.
    if (w[i].ends_with(':')) break;
    if (seen.insert(w[i]).second) d.deps.push_back(w[i]);
  }
  return d;
}

std::string write_depfile(const Depfile& depfile) {
  std::string out = escape(depfile.target) + ":";
  for (const auto& dep : depfile.deps) out += " \\\n  " + escape(dep);
  return out + "\n";
}

}  // namespace fabuild::objcache
