#include "engine/cell_env.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "wheel/layout.h"

namespace fabuild {

EnvList cell_build_env(const Cell& cell, const JobSettings& jobs) {
  const PackagePreset& p = *cell.package;
  EnvList env = {
      {p.force_build_env, "TRUE"},
      {"BUILD_TARGET", "cuda"},
      {p.archs_env, to_string(cell.archs)},
      {p.local_version_env, local_label(cell)},
      {p.cxx11_abi_env, to_string(cell.abi)},
      {"MAX_JOBS", std::to_string(jobs.max_jobs)},
      {"NVCC_THREADS", std::to_string(jobs.nvcc_threads)},
  };
  for (const auto& [k, v] : cell.env) env.emplace_back(k, v);
  return env;
}

std::vector<std::string> inherited_env(const char* const* environ) {
  static const std::vector<std::string_view> names = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TZ", "TMPDIR",
                                                      "TERM", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"};
  static const std::vector<std::string_view> prefixes = {"LC_", "PIP_"};
  std::vector<std::string> out;
  for (const char* const* e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool wanted = std::find(names.begin(), names.end(), name) != names.end() ||
                        std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return name.starts_with(p); });
    if (wanted && name.size() < entry.size()) out.emplace_back(entry);
  }
  return out;
}

std::vector<std::string> merge_env(const std::vector<std::string>& base, const EnvList& overrides) {
  std::vector<std::string> order;
  std::map<std::string, std::string> values;
  const auto put = [&](const std::string& k, const std::string& v) {
    if (values.emplace(k, v).second) {
      order.push_back(k);
    } else {
      values[k] = v;
    }
  };
  for (const auto& e : base) {
    const auto eq = e.find('=');
    put(e.substr(0, eq), eq == std::string::npos ? "" : e.substr(eq + 1));
  }
  for (const auto& [k, v] : overrides) put(k, v);
  std::vector<std::string> out;
  for (const auto& k : order) out.push_back(k + "=" + values[k]);
  return out;
}

}  // namespace fabuild
