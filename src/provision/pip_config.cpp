#include "provision/pip_config.h"

#include <chrono>
#include <map>
#include <regex>

#include "util/text.h"

namespace fabuild {

namespace {

// pip writes a list value as its words, or its lines with "\n" written out, in one quoted value.
std::vector<std::string> words(const std::string& value) {
  std::vector<std::string> out;
  std::string word;
  const auto flush = [&] {
    if (!word.empty()) out.push_back(word);
    word.clear();
  };
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c == '\\' && i + 1 < value.size() && value[i + 1] == 'n') {
      flush();
      ++i;
    } else if (c == ' ' || c == '\n' || c == '\t') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

bool truthy(const std::string& value) {
  const std::string v = to_lower(trim(value));
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

// pip's precedence: its PIP_* variables over its files' [install] section over [global].
int rank(const std::string& section) {
  return section == ":env:" ? 3 : section == "install" ? 2 : section == "global" ? 1 : 0;
}

}  // namespace

PipConfig parse_pip_config(const std::string& output) {
  static const std::regex line(R"(^([^.=]*)\.([a-z0-9_-]+)='(.*)'$)");
  std::map<std::string, std::pair<int, std::string>> values;  // key -> (rank, value)
  for (const std::string& raw : split(output, '\n')) {
    std::smatch m;
    const std::string text = trim(raw);
    if (!std::regex_match(text, m, line)) continue;
    const int r = rank(m[1].str());
    auto& slot = values[m[2].str()];
    if (r > 0 && r >= slot.first) slot = {r, m[3].str()};
  }
  PipConfig config;
  for (const auto& [key, ranked] : values) {
    const std::string& value = ranked.second;
    if (ranked.first == 0) continue;
    if (key == "index-url") config.index_url = trim(value);
    if (key == "extra-index-url") config.extra_index_urls = words(value);
    if (key == "find-links") config.find_links = words(value);
    if (key == "trusted-host") config.trusted_hosts = words(value);
    if (key == "cert") config.cert = trim(value);
    if (key == "no-index") config.no_index = truthy(value);
  }
  return config;
}

PipConfig read_pip_config(CommandRunner& runner, const std::string& python, const std::vector<std::string>& env) {
  const CommandResult r = runner.run({python, "-m", "pip", "config", "list"}, env, std::chrono::seconds(60));
  return r.ok() ? parse_pip_config(r.output) : PipConfig{};
}

std::vector<std::string> uv_index_args(const PipConfig& config, bool own_index) {
  std::vector<std::string> args;
  if (config.no_index) args.emplace_back("--no-index");
  if (!config.index_url.empty() && !own_index) args.insert(args.end(), {"--index-url", config.index_url});
  for (const auto& url : config.extra_index_urls) args.insert(args.end(), {"--extra-index-url", url});
  for (const auto& link : config.find_links) args.insert(args.end(), {"--find-links", link});
  for (const auto& host : config.trusted_hosts) args.insert(args.end(), {"--allow-insecure-host", host});
  return args;
}

std::vector<std::pair<std::string, std::string>> uv_env(const PipConfig& config) {
  if (config.cert.empty()) return {};
  return {{"SSL_CERT_FILE", config.cert}};
}

}  // namespace fabuild
