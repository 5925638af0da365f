#include "objcache/reproducible.h"

#include <fstream>
#include <string_view>

namespace fabuild::objcache {

namespace {

bool hex_digits(const std::string& s, std::size_t at, std::size_t n) {
  if (at + n > s.size()) return false;
  for (std::size_t i = at; i < at + n; ++i) {
    const char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

ModuleAnchor module_anchor(const std::string& seed) {
  ModuleAnchor anchor;
  anchor.name = "fabuild_module_" + seed.substr(0, 16);
  anchor.header =
      "// fabuild-cc: names this unit's nvcc module id (objcache/reproducible.h)\n"
      "#if defined(__GNUC__) || defined(__clang__)\n"
      "__attribute__((visibility(\"hidden\")))\n"
      "#endif\n"
      "int " +
      anchor.name + " = 1;\n";
  return anchor;
}

Expected<std::filesystem::path> write_module_anchor(const std::filesystem::path& dir, const std::string& seed) {
  const ModuleAnchor anchor = module_anchor(seed);
  const std::filesystem::path header = dir / (anchor.name + ".h");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream out(header, std::ios::binary);
  out << anchor.header;
  if (ec || !out.flush()) return fail("cannot write " + header.string());
  return header;
}

std::size_t pin_nvcc_temp_names(std::string& object) {
  constexpr std::string_view kPrefix = "tmpxft_";
  std::size_t changed = 0;
  for (std::size_t at = object.find(kPrefix); at != std::string::npos; at = object.find(kPrefix, at + 1)) {
    const std::size_t digits = at + kPrefix.size();
    if (!hex_digits(object, digits, 8) || digits + 8 >= object.size() || object[digits + 8] != '_' ||
        !hex_digits(object, digits + 9, 8)) {
      continue;
    }
    const std::string zeros = "00000000_00000000";
    if (object.compare(digits, zeros.size(), zeros) != 0) {
      object.replace(digits, zeros.size(), zeros);
      ++changed;
    }
  }
  return changed;
}

}  // namespace fabuild::objcache
