#include "source/setup_py.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>

namespace fabuild {

namespace {

constexpr std::uintmax_t kMaxSetupPyBytes = 1024 * 1024;

std::string escape_regex(const std::string& text) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(text, special, R"(\$&)");
}

}  // namespace

SetupPyFacts read_setup_py(const std::string& text, const std::string& switch_prefix) {
  SetupPyFacts facts;
  static const std::regex limited(R"(["']py_limited_api["']\s*:\s*["'](cp3\d{1,2})["'])");
  std::smatch m;
  if (std::regex_search(text, m, limited)) facts.limited_api = m[1].str();
  static const std::regex stable(R"(target_version\s*=\s*parse\(\s*["']([0-9][0-9A-Za-z.+]*)["']\s*\))");
  if (std::regex_search(text, m, stable)) facts.stable_from = m[1].str();
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
