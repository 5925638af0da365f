#include "engine/facts.h"

namespace fabuild {

void read_facts(std::string_view output, Facts& facts) {
  std::size_t start = 0;
  while (start < output.size()) {
    const std::size_t end = std::min(output.find('\n', start), output.size());
    std::string_view line = output.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    if (!line.starts_with(kFactPrefix)) continue;
    line.remove_prefix(kFactPrefix.size());
    const std::size_t eq = line.find('=');
    if (eq == 0 || eq == std::string_view::npos) continue;
    facts[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
}

std::string fact_line(const std::string& name, const std::string& value) {
  return std::string(kFactPrefix) + name + "=" + value;
}

std::vector<std::pair<std::string, std::string>> env_of_facts(const Facts& facts) {
  std::vector<std::pair<std::string, std::string>> env;
  for (auto it = facts.lower_bound(std::string(kEnvFactPrefix)); it != facts.end(); ++it) {
    if (!it->first.starts_with(kEnvFactPrefix)) break;
    if (it->first.size() > kEnvFactPrefix.size()) env.emplace_back(it->first.substr(kEnvFactPrefix.size()), it->second);
  }
  return env;
}

std::optional<std::string> fact(const Facts& facts, const std::string& name) {
  const auto it = facts.find(name);
  if (it == facts.end()) return std::nullopt;
  return it->second;
}

}  // namespace fabuild
