#include "wheel/exports.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "wheel/exports_elf.h"
#include "wheel/pe_exports.h"
#include "wheel/symbol_names.h"

namespace fabuild {

namespace {

// The functions a PE image defines and exports by name: not forwarded to another DLL, and in
// an executable section (exported data is not an entry point).
Expected<std::vector<std::string>> pe_exported_functions(const std::filesystem::path& library) {
  const auto exports = read_pe_exports_file(library);
  if (!exports) return tl::make_unexpected(exports.error());
  std::vector<std::string> names;
  for (const PeExport& e : exports->exports) {
    if (e.code && !e.forwarded) names.push_back(e.name);
  }
  return names;
}

// Every function the library exports: (qualified name, signature).
Expected<std::vector<std::pair<std::string, std::string>>> defined_functions(const std::filesystem::path& library) {
  std::string head(4, '\0');
  std::ifstream in(library, std::ios::binary);
  if (!in.read(head.data(), static_cast<std::streamsize>(head.size()))) {
    return fail(fmt::format("cannot read {}", library.string()));
  }
  const Expected<std::vector<std::string>> raw =
      looks_like_pe(head) ? pe_exported_functions(library) : elf_exported_functions(library);
  if (!raw) return tl::make_unexpected(raw.error());
  std::vector<std::pair<std::string, std::string>> defined;
  for (const std::string& name : *raw) {
    if (auto s = symbol_name(name)) defined.emplace_back(std::move(s->qualified), std::move(s->signature));
  }
  return defined;
}

}  // namespace

Expected<std::vector<std::string>> exported_functions(const std::filesystem::path& library) {
  const auto defined = defined_functions(library);
  if (!defined) return tl::make_unexpected(defined.error());
  std::vector<std::string> names;
  for (const auto& [name, signature] : *defined) names.push_back(name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Expected<ExportCheck> check_exports(const std::filesystem::path& library, const std::vector<std::string>& wanted) {
  const auto functions = defined_functions(library);
  if (!functions) return tl::make_unexpected(functions.error());
  const std::vector<std::pair<std::string, std::string>>& defined = *functions;

  ExportCheck check;
  for (const auto& want : wanted) {
    const bool qualified = want.find("::") != std::string::npos;
    const auto it = std::find_if(defined.begin(), defined.end(), [&](const auto& d) {
      return qualified ? d.first == want : unqualified(d.first) == want;
    });
    if (it == defined.end()) {
      check.missing.push_back(want);
    } else {
      check.found[want] = it->second;
    }
  }
  return check;
}

}  // namespace fabuild
