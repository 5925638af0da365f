#include "matrix/command.h"

#include <algorithm>

#include "matrix/axes.h"

namespace fabuild {

std::vector<std::string> command_placeholders() {
  std::vector<std::string> names = {"{id}",    "{version}", "{torch}", "{cuda}",     "{python}",      "{platform}",
                                    "{archs}", "{label}",   "{out}",   "{max_jobs}", "{nvcc_threads}"};
  for (const AxisRow* row : declared_axes()) names.push_back("{" + std::string(row->key) + "}");
  return names;
}

namespace {

// Calls on_name for each {name}, on_text for the text between; "{{"/"}}" are literal.
template <class OnText, class OnName>
bool scan(const std::string& arg, OnText on_text, OnName on_name) {
  for (std::size_t i = 0; i < arg.size(); ++i) {
    if ((arg[i] == '{' || arg[i] == '}') && i + 1 < arg.size() && arg[i + 1] == arg[i]) {
      on_text(arg[i]);
      ++i;
    } else if (arg[i] == '{') {
      const std::size_t end = arg.find('}', i);
      if (end == std::string::npos) return on_name(arg.substr(i + 1));
      if (!on_name(arg.substr(i + 1, end - i - 1))) return false;
      i = end;
    } else {
      on_text(arg[i]);
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> unknown_placeholder(const std::string& arg) {
  const auto known = command_placeholders();
  std::optional<std::string> bad;
  scan(
      arg, [](char) {},
      [&](const std::string& name) {
        if (std::find(known.begin(), known.end(), "{" + name + "}") != known.end()) return true;
        bad = name;
        return false;
      });
  return bad;
}

std::string expand_placeholders(const std::string& arg, const std::map<std::string, std::string>& values) {
  std::string out;
  scan(
      arg, [&](char c) { out += c; },
      [&](const std::string& name) {
        const auto it = values.find(name);
        if (it != values.end()) out += it->second;
        return true;
      });
  return out;
}

}  // namespace fabuild
