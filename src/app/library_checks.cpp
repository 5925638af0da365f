#include "app/library_checks.h"

#include <algorithm>
#include <regex>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "app/library_recipe.h"
#include "util/text.h"
#include "wheel/exports.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

// The version the recipe took from the source (share/flash_attn/build_info.txt: "fa3 3.0.0, archs ...").
std::optional<Version> built_version(const Files& files, const fs::path& install) {
  std::istringstream in(files.read(install / "share" / "flash_attn" / "build_info.txt").value_or(""));
  std::string flavour, version;
  if (!(in >> flavour >> version)) return std::nullopt;
  if (!version.empty() && version.back() == ',') version.pop_back();
  return Version::parse(version);
}

}  // namespace

Expected<std::map<std::string, std::string>> verify_installed_library(const Files& files, const fs::path& install,
                                                                      const Cell& cell) {
  std::vector<std::string> problems;
  for (const char* file : {"include/flash_attn/flash_attn.h", "lib/cmake/flash_attn/flash_attnConfig.cmake",
                           "lib/cmake/flash_attn/flash_attnConfigVersion.cmake",
                           "lib/cmake/flash_attn/flash_attnTargets.cmake", "share/flash_attn/test/CMakeLists.txt"}) {
    if (!files.is_file(install / file)) problems.push_back(fmt::format("no {}", file));
  }
  const auto version = built_version(files, install);
  if (!version) {
    problems.push_back("share/flash_attn/build_info.txt does not name the source's version");
  } else if (!(*version == cell.version)) {
    problems.push_back(fmt::format("the source is version {}, the cell is {}: the wrong source was built",
                                   version->str(), cell.version.str()));
  }
  const fs::path library = install / "lib" / "libflash_attn.so";
  std::map<std::string, std::string> found;
  if (!files.exists(library)) {
    problems.push_back("no lib/libflash_attn.so");
  } else {
    const fs::path real = files.resolve(library).value_or(library);
    const Expected<std::vector<std::string>> exported = exported_functions(real);
    const Expected<ExportCheck> check = exported ? check_exports(real, kLibraryExports) : Expected<ExportCheck>();
    if (!exported || !check) {
      problems.push_back("export check: " + (exported ? check.error().what : exported.error().what));
    } else {
      std::vector<std::string> extra;
      for (const auto& name : *exported) {
        if (std::find(kLibraryExports.begin(), kLibraryExports.end(), name) == kLibraryExports.end())
          extra.push_back(name);
      }
      if (!check->missing.empty()) problems.push_back("it does not export " + join(check->missing, ", "));
      if (!extra.empty()) {
        const std::size_t count = extra.size();
        extra.resize(std::min<std::size_t>(count, 5));
        problems.push_back(fmt::format("it exports {} function{} beyond the C API ({}{}): a symbol left visible", count,
                                       count == 1 ? "" : "s", join(extra, ", "), count > 5 ? ", ..." : ""));
      }
      found = check->found;
    }
  }
  if (!problems.empty()) {
    return fail(fmt::format("the installed library in {} is not what a consumer needs: {}", install.string(),
                            join(problems, "; ")));
  }
  return found;
}

}  // namespace fabuild
