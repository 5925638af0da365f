#include "source/setup_py.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

#include <fmt/format.h>

namespace fabuild {

namespace {

constexpr std::uintmax_t kMaxSetupPyBytes = 1024 * 1024;

std::string escape_regex(const std::string& text) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(text, special, R"(\$&)");
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

std::size_t indent_of(const std::string& line) { return line.find_first_not_of(" \t"); }

// A line that holds code: not blank, not a comment.
bool is_code(const std::string& line) {
  const std::size_t at = indent_of(line);
  return at != std::string::npos && line[at] != '#';
}

std::string stripped(const std::string& line) {
  const std::size_t at = indent_of(line);
  return at == std::string::npos ? std::string() : line.substr(at);
}

// "0x020a000000000000" -> "2.10": PyTorch packs major, minor and patch into the top three bytes.
std::optional<std::string> target_version(const std::string& hex) {
  if (hex.size() != 16) return std::nullopt;
  const std::uint64_t v = std::stoull(hex, nullptr, 16);
  const auto byte = [&](int shift) { return static_cast<int>((v >> shift) & 0xffU); };
  if (byte(40) != 0) return fmt::format("{}.{}.{}", byte(56), byte(48), byte(40));
  return fmt::format("{}.{}", byte(56), byte(48));
}

// Follows the conditions around the TORCH_TARGET_VERSION define, and the names they test, to
// what they need: variables set to "TRUE" and a torch release to build against.
class StableReader {
 public:
  explicit StableReader(const std::vector<std::string>& lines) : lines_(lines) {}

  void condition(const std::string& text, int line, int depth, StableAbiFacts& facts) {
    static const std::regex getenv(
        R"(os\.(?:getenv|environ\.get)\(\s*["']([A-Za-z0-9_]+)["'][^)]*\)\s*==\s*["']TRUE["'])");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), getenv); it != std::sregex_iterator(); ++it) {
      if (negated(text, static_cast<std::size_t>(it->position(0)))) continue;
      const std::string name = (*it)[1].str();
      if (std::none_of(facts.needs.begin(), facts.needs.end(), [&](const auto& n) { return n.variable == name; }))
        facts.needs.push_back({name, line});
    }
    static const std::regex tuple(R"(\(\s*TORCH_MAJOR\s*,\s*TORCH_MINOR\s*\)\s*>=\s*\(\s*(\d+)\s*,\s*(\d+)\s*\))");
    static const std::regex parsed(R"(>=\s*(?:parse|Version)\(\s*["']([0-9][0-9A-Za-z.+]*)["']\s*\))");
    std::smatch m;
    if (std::regex_search(text, m, tuple)) set_from(facts, m[1].str() + "." + m[2].str(), line);
    if (std::regex_search(text, m, parsed)) set_from(facts, m[1].str(), line);
    if (depth >= 3) return;
    // The names it tests, each followed to where it is assigned; a name tested with `not` needs
    // the opposite of what its assignment says and is left alone (`not IS_ROCM`).
    static const std::regex name(R"(\b[A-Za-z_][A-Za-z0-9_]*\b)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) {
      const std::string word = it->str();
      const std::size_t at = static_cast<std::size_t>(it->position(0)) + word.size();
      if (kWords.count(word) || negated(text, static_cast<std::size_t>(it->position(0)))) continue;
      if (at < text.size() && (text[at] == '(' || text[at] == '.')) continue;  // a call or a module
      if (it->position(0) > 0 && text[static_cast<std::size_t>(it->position(0)) - 1] == '.') continue;
      if (!visited_.insert(word).second) continue;
      names.insert(word);
      const auto [rhs, where] = assignment(word);
      if (where == 0) continue;
      static const std::regex literal(R"(^(?:parse|Version)\(\s*["']([0-9][0-9A-Za-z.+]*)["']\s*\)\s*$)");
      if (std::regex_search(rhs, m, literal)) {
        set_from(facts, m[1].str(), where);
      } else {
        condition(rhs, where, depth + 1, facts);
      }
    }
  }

  std::set<std::string> names;  // every name the conditions test, directly or through others

 private:
  static inline const std::set<std::string> kWords = {
      "and", "or",    "not",   "in",      "is",          "None",        "True",   "False",   "if", "else",
      "os",  "torch", "parse", "Version", "TORCH_MAJOR", "TORCH_MINOR", "getenv", "environ", "get"};

  static bool negated(const std::string& text, std::size_t at) {
    const std::string before = text.substr(0, at);
    static const std::regex ends_with_not(R"(\bnot\s*\(?\s*$)");
    return std::regex_search(before, ends_with_not);
  }

  static void set_from(StableAbiFacts& facts, const std::string& version, int line) {
    if (!facts.from.empty()) return;
    facts.from = version;
    facts.from_line = line;
  }

  // The right-hand side of the first `NAME = ...` and its line; line 0 when there is none.
  std::pair<std::string, int> assignment(const std::string& word) const {
    const std::regex assigned("^\\s*" + word + R"(\s*=(?!=)\s*(.+)$)");
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      std::smatch m;
      if (is_code(lines_[i]) && std::regex_search(lines_[i], m, assigned)) return {m[1].str(), static_cast<int>(i + 1)};
    }
    return {"", 0};
  }

  const std::vector<std::string>& lines_;
  std::set<std::string> visited_;
};

std::optional<StableAbiFacts> read_stable_abi(const std::string& text) {
  const std::vector<std::string> lines = split_lines(text);
  static const std::regex define(R"(TORCH_TARGET_VERSION=0x([0-9A-Fa-f]+))");
  std::smatch m;
  std::size_t at = 0;
  for (; at < lines.size(); ++at) {
    if (is_code(lines[at]) && std::regex_search(lines[at], m, define)) break;
  }
  if (at == lines.size()) return std::nullopt;
  const auto floor = target_version(m[1].str());
  if (!floor) return std::nullopt;
  StableAbiFacts facts;
  facts.floor = *floor;
  facts.line = static_cast<int>(at + 1);
  StableReader reader(lines);
  // The blocks around the define, innermost first: each line less indented than the last.
  std::size_t level = indent_of(lines[at]);
  for (std::size_t j = at; j-- > 0 && level > 0;) {
    if (!is_code(lines[j]) || indent_of(lines[j]) >= level) continue;
    level = indent_of(lines[j]);
    const std::string code = stripped(lines[j]);
    static const std::regex branch(R"(^(?:el)?if\s+(.+):\s*(?:#.*)?$)");
    std::smatch c;
    if (std::regex_search(code, c, branch)) reader.condition(c[1].str(), static_cast<int>(j + 1), 0, facts);
  }
  // `options={"bdist_wheel": {"py_limited_api": "cp310"}} if STABLE_ABI else {}`: the limited API
  // comes with a name the stable build's conditions test.
  static const std::regex limited(R"(["']py_limited_api["'][^\n]*\bif\s+([^\n]+?)\s+else\b)");
  if (std::regex_search(text, m, limited)) {
    static const std::regex name(R"(\b[A-Za-z_][A-Za-z0-9_]*\b)");
    const std::string cond = m[1].str();
    for (auto it = std::sregex_iterator(cond.begin(), cond.end(), name); it != std::sregex_iterator(); ++it) {
      if (reader.names.count(it->str())) facts.limited_api_with_stable_only = true;
    }
  }
  return facts;
}

}  // namespace

SetupPyFacts read_setup_py(const std::string& text, const std::string& switch_prefix) {
  SetupPyFacts facts;
  static const std::regex limited(R"(["']py_limited_api["']\s*:\s*["'](cp3\d{1,2})["'])");
  std::smatch m;
  if (std::regex_search(text, m, limited)) facts.limited_api = m[1].str();
  static const std::regex stable(R"(target_version\s*=\s*parse\(\s*["']([0-9][0-9A-Za-z.+]*)["']\s*\))");
  if (std::regex_search(text, m, stable)) facts.stable_from = m[1].str();
  facts.stable = read_stable_abi(text);
  if (!switch_prefix.empty()) {
    const std::regex getenv(R"(os\.(?:getenv|environ\.get)\(\s*["'])" + escape_regex(switch_prefix) +
                            R"(([A-Z0-9_]+)["'])");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), getenv); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1].str();
      if (std::find(facts.switches.begin(), facts.switches.end(), name) == facts.switches.end())
        facts.switches.push_back(name);
    }
  }
  return facts;
}

std::optional<SetupPyFacts> read_setup_py_file(const std::filesystem::path& setup_py,
                                               const std::string& switch_prefix) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(setup_py, ec);
  if (ec || size > kMaxSetupPyBytes) return std::nullopt;
  std::ifstream in(setup_py, std::ios::binary);
  if (!in) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return read_setup_py(text, switch_prefix);
}

}  // namespace fabuild
