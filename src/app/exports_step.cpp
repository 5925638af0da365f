#include "app/exports_step.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "app/wheel_steps.h"
#include "source/setup_py.h"
#include "util/text.h"
#include "wheel/exports.h"

namespace fabuild {

namespace fs = std::filesystem;

std::string extension_pattern(const Cell& cell) {
  std::string path = cell.package->extension;
  std::replace(path.begin(), path.end(), '.', '/');
  return path + (cell.platform == Platform::kWinAmd64 ? "*.pyd" : "*.so");
}

std::string module_init_export(const Cell& cell) {
  const std::string& module = cell.package->extension;
  const auto dot = module.rfind('.');
  return "PyInit_" + (dot == std::string::npos ? module : module.substr(dot + 1));
}

std::vector<std::string> expected_exports(const Cell& cell, const fs::path& source_dir,
                                          const std::string& torch_version, const Files& files) {
  const PackagePreset& p = *cell.package;
  // torch's stable API keeps its Tensor in a hidden namespace, so a function that takes one is
  // hidden too: a stable-ABI cell's C++ entry points are its kernels' (docs/cpp-consumers.md).
  if (cell.stable() && !p.stable_exports.empty()) return p.stable_exports;
  if (p.stable_api_source.empty() || !files.exists(source_dir / p.stable_api_source)) return p.exports;
  const auto facts = read_setup_py_file(source_dir / "setup.py", "");
  // "2.9.0.dev20250830" and "2.11.0+cu130": their releases are compared (a nightly of 2.9.0
  // counts as 2.9.0, as setup.py means it).
  const auto release = [](const std::string& text) {
    std::size_t end = 0;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) != 0 || text[end] == '.')) ++end;
    while (end > 0 && text[end - 1] == '.') --end;
    return Version::parse(text.substr(0, end));
  };
  const auto from = facts && facts->stable_from ? release(*facts->stable_from) : std::nullopt;
  const auto torch = release(torch_version);
  if (!from || !torch) return p.exports;
  for (std::size_t i = 0; i < std::max(from->release().size(), torch->release().size()); ++i) {
    if (torch->part(i) != from->part(i)) return torch->part(i) > from->part(i) ? p.stable_exports : p.exports;
  }
  return p.stable_exports;
}

Step exports_step(const Cell& cell, const fs::path& unpacked, const fs::path& source_dir,
                  std::shared_ptr<CellFindings> findings, std::shared_ptr<Files> files) {
  const std::string pattern = extension_pattern(cell);
  const std::string package = cell.package->name;
  const bool windows = cell.platform == Platform::kWinAmd64;
  const std::string init = module_init_export(cell);
  // MSVC exports from a DLL only what the source marks __declspec(dllexport), and setuptools
  // adds the module's PyInit_ (FlashAttention marks nothing): a win_amd64 library must export
  // its PyInit_, and the package's C++ entry points are recorded when it does export them.
  const auto check_windows = [init, findings, files](const fs::path& library,
                                                     const std::vector<std::string>& entry_points,
                                                     StepContext& ctx) -> StepResult {
    std::vector<std::string> wanted = entry_points;
    wanted.push_back(init);
    Expected<ExportCheck> checked = check_exports(library, wanted);
    if (!checked) return fail("export check: " + checked.error().what);
    ExportCheck& check = *checked;
    if (check.found.erase(init) == 0) {
      return fail(fmt::format("{} does not export {}: Python cannot import it", library.filename().string(), init));
    }
    files->append(ctx.cell.log_path,
                  fmt::format("fabuild: {} exports {}{}\n", library.filename().string(), init,
                              check.missing.empty() ? std::string(" and every C++ entry point")
                                                    : "; not exported (MSVC exports only what the source marks "
                                                      "__declspec(dllexport)): " +
                                                          join(check.missing, ", ")));
    findings->exports = check.found;
    return {};
  };
  return Step{"exports", {}, {}, {}, [=](StepContext& ctx) -> StepResult {
                const std::vector<std::string> wanted =
                    expected_exports(cell, source_dir, fact(ctx.facts, kFactTorch).value_or(""), *files);
                std::vector<fs::path> libraries;
                for (const fs::path& file : files->files_under(unpacked, {}).value_or(std::vector<fs::path>())) {
                  if (glob_match(pattern, file.lexically_relative(unpacked).generic_string()))
                    libraries.push_back(file);
                }
                if (libraries.size() != 1) {
                  return fail(fmt::format("expected one {} in the wheel for the export check, found {}", pattern,
                                          libraries.size()));
                }
                if (windows) return check_windows(libraries.front(), wanted, ctx);
                const Expected<ExportCheck> check = check_exports(libraries.front(), wanted);
                if (!check) return fail("export check: " + check.error().what);
                if (!check->missing.empty()) {
                  return fail(fmt::format(
                      "{} does not export {} (C++ programs link against {}'s entry points: {}; "
                      "docs/cpp-consumers.md)",
                      libraries.front().filename().string(), join(check->missing, ", "), package, join(wanted, ", ")));
                }
                findings->exports = check->found;
                return {};
              }};
}

}  // namespace fabuild
