#include "wheel/symbol_names.h"

#include <cstdlib>
#include <memory>
#include <vector>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define FABUILD_HAS_CXXABI 1
#endif

namespace fabuild {

std::string demangle_itanium(const std::string& name) {
#ifdef FABUILD_HAS_CXXABI
  // Only mangled names: the demangler reads a plain "i" or "f" as a type ("int", "float").
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                  &std::free);
  return status == 0 && out ? std::string(out.get()) : name;
#else
  return name;
#endif
}

std::string qualified_name(const std::string& signature) {
  const std::string name = signature.substr(0, signature.find('('));
  int depth = 0;
  std::string out;
  for (char c : name) {
    if (c == '<') ++depth;
    if (depth == 0) out += c;
    if (c == '>') --depth;
  }
  if (const auto space = out.rfind(' '); space != std::string::npos) out = out.substr(space + 1);
  return out;
}

std::string unqualified(const std::string& qualified) {
  const auto colons = qualified.rfind("::");
  return colons == std::string::npos ? qualified : qualified.substr(colons + 2);
}

std::optional<std::string> msvc_qualified_name(const std::string& decorated) {
  // ?name@scope1@scope2@@<type>: the innermost name first, each part ended by '@', the list by
  // a second '@'. A single digit is a back-reference to an earlier part of the same name.
  if (decorated.size() < 4 || decorated[0] != '?' || decorated[1] == '?') return std::nullopt;
  std::vector<std::string> parts;
  std::size_t at = 1;
  while (at < decorated.size() && decorated[at] != '@') {
    if (decorated[at] >= '0' && decorated[at] <= '9') {
      const auto index = static_cast<std::size_t>(decorated[at] - '0');
      if (index >= parts.size()) return std::nullopt;
      parts.push_back(parts[index]);
      ++at;
      continue;
    }
    if (decorated[at] == '?') return std::nullopt;  // a template, an operator or a local scope
    const auto end = decorated.find('@', at);
    if (end == std::string::npos) return std::nullopt;
    parts.push_back(decorated.substr(at, end - at));
    at = end + 1;
  }
  if (at >= decorated.size() || parts.empty()) return std::nullopt;  // no closing '@'
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += (out.empty() ? "" : "::") + *it;
  return out;
}

std::optional<SymbolName> symbol_name(const std::string& raw) {
  if (raw.empty()) return std::nullopt;
  if (raw[0] == '?') {
    const auto qualified = msvc_qualified_name(raw);
    if (!qualified) return std::nullopt;
    return SymbolName{*qualified, raw};
  }
  const std::string signature = demangle_itanium(raw);
  return SymbolName{qualified_name(signature), signature};
}

}  // namespace fabuild
