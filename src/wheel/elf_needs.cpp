#include "wheel/elf_needs.h"

#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <string_view>

#include "util/version.h"

namespace fabuild {

namespace {

// glibc's own libraries, by the name before ".so"; the dynamic loader is ld-linux-x86-64.so.2,
// ld-linux-aarch64.so.1, ld64.so.2 (ppc64le)... A GLIBC_ version of another library (libxcrypt's
// compatibility versions) says nothing about the glibc installed.
bool is_glibc_library(std::string_view file) {
  if (file.starts_with("ld-linux") || file.starts_with("ld64.so")) return true;
  const std::string_view stem = file.substr(0, file.find(".so"));
  constexpr std::array<std::string_view, 10> kLibraries = {"libc",  "libm",    "libmvec", "libpthread", "libdl",
                                                           "librt", "libutil", "libanl",  "libresolv",  "libnsl"};
  for (const std::string_view name : kLibraries) {
    if (stem == name) return true;
  }
  return false;
}

// The highest "<prefix><number>" among `names` ("2.32" of GLIBC_2.32), keeping `floor` when it
// is higher; GLIBC_PRIVATE and other names that are not numbers are left out.
void raise_by(std::string& floor, const std::set<std::string>& names, std::string_view prefix) {
  for (const std::string& name : names) {
    if (!name.starts_with(prefix)) continue;
    const std::string number = name.substr(prefix.size());
    if (!Version::parse(number)) continue;
    if (floor.empty() || version_lower(floor, number)) floor = number;
  }
}

// "x.so", "libfoo.so.1.2"; not "x.so.py" or "x.sort".
bool is_shared_object_name(const std::string& name) {
  const auto at = name.rfind(".so");
  if (at == std::string::npos || at == 0) return false;
  const std::size_t rest = at + 3;
  if (rest == name.size()) return true;
  return name[rest] == '.' && name.find_first_not_of("0123456789.", rest) == std::string::npos;
}

}  // namespace

Expected<TreeFloor> tree_floor(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  TreeFloor found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || !is_shared_object_name(it->path().filename().string())) continue;
    const Expected<std::optional<VersionNeeds>> needs = elf_version_needs(it->path());
    if (!needs) return tl::make_unexpected(needs.error());
    if (!*needs) continue;
    ++found.objects;
    const SystemFloor floor = system_floor(**needs);
    if (!floor.glibc.empty() && (found.floor.glibc.empty() || version_lower(found.floor.glibc, floor.glibc))) {
      found.glibc_from = it->path();
    }
    raise_floor(found.floor, floor);
  }
  if (ec) return fail(fmt::format("cannot read the directory {}: {}", dir.string(), ec.message()));
  return found;
}

bool version_lower(const std::string& a, const std::string& b) {
  const auto va = Version::parse(a);
  const auto vb = Version::parse(b);
  if (!vb) return false;
  return !va || *va < *vb;
}

SystemFloor system_floor(const VersionNeeds& needs) {
  SystemFloor floor;
  for (const auto& [file, names] : needs) {
    if (is_glibc_library(file)) raise_by(floor.glibc, names, "GLIBC_");
    if (file.starts_with("libstdc++.so")) raise_by(floor.glibcxx, names, "GLIBCXX_");
  }
  return floor;
}

void raise_floor(SystemFloor& floor, const SystemFloor& other) {
  if (!other.glibc.empty() && (floor.glibc.empty() || version_lower(floor.glibc, other.glibc))) {
    floor.glibc = other.glibc;
  }
  if (!other.glibcxx.empty() && (floor.glibcxx.empty() || version_lower(floor.glibcxx, other.glibcxx))) {
    floor.glibcxx = other.glibcxx;
  }
}

}  // namespace fabuild
