#include "util/environment.h"

#include <algorithm>
#include <cctype>

#include "util/path_search.h"

namespace fabuild {

Environment Environment::parse(const char* const* entries) {
  Environment env;
  for (const char* const* e = entries; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=', entry.empty() || entry[0] != '=' ? 0 : 1);  // Windows' "=C:=C:\" entries
    if (eq != std::string::npos && eq > 0) env.set(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

Environment Environment::parse(const std::vector<std::string>& entries) {
  std::vector<const char*> pointers;
  for (const auto& e : entries) pointers.push_back(e.c_str());
  pointers.push_back(nullptr);
  return parse(pointers.data());
}

std::optional<std::string> Environment::get(const std::string& name) const {
  for (const auto& [k, v] : vars_) {
    if (same_name(k, name)) return v;
  }
  return std::nullopt;
}

std::string Environment::value(const std::string& name) const { return get(name).value_or(""); }

void Environment::set(const std::string& name, std::string value) {
  for (auto& [k, v] : vars_) {
    if (same_name(k, name)) {
      v = std::move(value);
      return;
    }
  }
  vars_.emplace_back(name, std::move(value));
}

Environment Environment::with(const EnvList& overrides) const {
  Environment out = *this;
  for (const auto& [k, v] : overrides) out.set(k, v);
  return out;
}

std::vector<std::string> Environment::entries() const {
  std::vector<std::string> out;
  out.reserve(vars_.size());
  for (const auto& [k, v] : vars_) out.push_back(k + "=" + v);
  return out;
}

std::string Environment::find_program(const std::string& program) const { return find_in_path(program, value("PATH")); }

}  // namespace fabuild
