#include "app/exports_step.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/wheel_steps.h"
#include "util/text.h"
#include "wheel/exports.h"

namespace fabuild {

namespace fs = std::filesystem;

std::string extension_pattern(const Cell& cell) {
  std::string path = cell.package->extension;
  std::replace(path.begin(), path.end(), '.', '/');
  return path + "*.so";
}

Step exports_step(const Cell& cell, const fs::path& unpacked) {
  const std::vector<std::string> wanted = cell.package->exports;
  const std::string pattern = extension_pattern(cell);
  const std::string package = cell.package->name;
  return Step{"exports", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
                std::vector<fs::path> libraries;
                std::error_code ec;
                for (auto it = fs::recursive_directory_iterator(unpacked, ec); !ec && it != fs::recursive_directory_iterator();
                     it.increment(ec)) {
                  if (!it->is_regular_file()) continue;
                  if (glob_match(pattern, fs::relative(it->path(), unpacked).generic_string())) libraries.push_back(it->path());
                }
                if (libraries.size() != 1) {
                  return tl::make_unexpected(fmt::format("expected one {} in the wheel for the export check, found {}",
                                                         pattern, libraries.size()));
                }
                try {
                  const ExportCheck check = check_exports(libraries.front(), wanted);
                  if (!check.missing.empty()) {
                    return tl::make_unexpected(
                        fmt::format("{} does not export {} (C++ programs link against {}'s entry points: {}; "
                                    "docs/cpp-consumers.md)",
                                    libraries.front().filename().string(), join(check.missing, ", "), package,
                                    join(wanted, ", ")));
                  }
                  ctx.facts[kFactExports] = nlohmann::json(check.found).dump();
                } catch (const std::exception& e) {
                  return tl::make_unexpected(std::string("export check: ") + e.what());
                }
                return {};
              }};
}

}  // namespace fabuild
