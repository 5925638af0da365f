#include "objcache/reproducible.h"

#include <string_view>
#include <vector>

#include "util/hash.h"

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

bool decimal_digit(char c) { return c >= '0' && c <= '9'; }

// The id's random tail in `id` (an identifier "_INTERNAL_<8 hex>_<n>_<name>_cu_<8 hex>_<digits>"):
// where it starts, or npos when the id has none (its tail is a symbol's name).
std::size_t random_tail(const std::string& id) {
  const std::size_t cu = id.rfind("_cu_");
  if (cu == std::string::npos) return std::string::npos;
  const std::size_t tail = cu + 4;
  if (!hex_digits(id, tail, 8) || tail + 9 >= id.size() || id[tail + 8] != '_') return std::string::npos;
  for (std::size_t i = tail + 9; i < id.size(); ++i) {
    if (!decimal_digit(id[i])) return std::string::npos;
  }
  return tail;
}

// The module ids a mangled name spells out whole: "<length>_INTERNAL_...", the length digits
// before it saying where the identifier ends.
std::vector<std::string> mangled_module_ids(const std::string& object) {
  constexpr std::string_view kInternal = "_INTERNAL_";
  std::vector<std::string> ids;
  for (std::size_t at = object.find(kInternal); at != std::string::npos; at = object.find(kInternal, at + 1)) {
    std::size_t length = 0, scale = 1;
    for (std::size_t d = at; d > 0 && decimal_digit(object[d - 1]) && scale <= 1000; --d, scale *= 10) {
      length += static_cast<std::size_t>(object[d - 1] - '0') * scale;
      if (length <= kInternal.size() || at + length > object.size()) continue;
      const std::string id = object.substr(at, length);
      if (random_tail(id) != std::string::npos) ids.push_back(id);
    }
  }
  return ids;
}

}  // namespace

std::size_t pin_nvcc_module_ids(std::string& object) {
  std::size_t changed = 0;
  for (const std::string& id : mangled_module_ids(object)) {
    // What _INTERNAL_ and _GLOBAL__N_ names share: "_<path hash>_<n>_<file>_cu_" and the tail.
    constexpr std::size_t kSkip = std::string_view("_INTERNAL").size();
    const std::string common = id.substr(kSkip);
    const std::string head = common.substr(0, random_tail(id) - kSkip);
    const std::string digest = hex(sha256_of(head));
    std::string pinned = head + digest.substr(0, 8) + "_";
    for (std::size_t i = pinned.size(); i < common.size(); ++i) pinned += static_cast<char>('0' + digest[i % 64] % 10);
    if (pinned == common) continue;  // pinned already
    // Each id once: after its first, the object no longer has it.
    for (std::size_t at = object.find(common); at != std::string::npos; at = object.find(common, at + pinned.size())) {
      object.replace(at, common.size(), pinned);
      ++changed;
    }
  }
  return changed;
}

namespace {

// The images of one -gencode value ("arch=compute_90,code=sm_90", "arch=compute_90,code=[sm_90,compute_90]"):
// false when one is PTX or the value is not understood.
bool sass_only_gencode(std::string_view value) {
  const auto code = value.find("code=");
  if (code == std::string_view::npos || value.find("arch=") == std::string_view::npos) return false;
  std::string_view codes = value.substr(code + 5);
  std::string item;
  bool any = false;
  for (std::size_t i = 0; i <= codes.size(); ++i) {
    const char c = i < codes.size() ? codes[i] : ',';
    if (c == '[' || c == ']' || c == '"' || c == '\'' || c == ' ') continue;
    if (c != ',') {
      item += c;
      continue;
    }
    if (item.empty()) continue;
    if (!item.starts_with("sm_")) return false;
    any = true;
    item.clear();
  }
  return any;
}

// The value of an option given as "-opt value", "-opt=value" or "--long value", "--long=value".
bool option_value(const std::vector<std::string>& args, std::size_t& i, std::string_view shortname,
                  std::string_view longname, std::string& value) {
  const std::string& a = args[i];
  for (std::string_view name : {shortname, longname}) {
    if (name.empty()) continue;
    if (a == name && i + 1 < args.size()) {
      value = args[++i];
      return true;
    }
    if (a.size() > name.size() && a.starts_with(name) && a[name.size()] == '=') {
      value = a.substr(name.size() + 1);
      return true;
    }
  }
  return false;
}

}  // namespace

bool module_ids_pinnable(const std::vector<std::string>& args) {
  bool gencode = false, arch_alone = false, code_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string value;
    if (a == "-dc" || a == "--device-c" || a == "-G" || a == "--device-debug" ||
        a.find("compress") != std::string::npos || a.starts_with("-Xfatbin") || a.starts_with("--fatbin-options")) {
      return false;
    }
    if (option_value(args, i, "-rdc", "--relocatable-device-code", value)) {
      if (value == "true") return false;
    } else if (option_value(args, i, "-gencode", "--generate-code", value)) {
      if (!sass_only_gencode(value)) return false;
      gencode = true;
    } else if (option_value(args, i, "-arch", "--gpu-architecture", value)) {
      arch_alone = true;
      if (!value.starts_with("sm_") && !value.starts_with("compute_")) return false;  // all, native...
    } else if (option_value(args, i, "-code", "--gpu-code", value)) {
      code_given = true;
      if (!sass_only_gencode("arch=x,code=" + value)) return false;
    }
  }
  // -arch=sm_90 alone is code=[sm_90,compute_90]: PTX too; no arch at all is nvcc's default, PTX too.
  if (arch_alone && !code_given) return false;
  return gencode || (arch_alone && code_given);
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
