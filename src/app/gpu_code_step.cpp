#include "app/gpu_code_step.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "provision/python_env.h"
#include "util/text.h"

namespace fabuild {

namespace {

constexpr const char* kFactGpuCode = "gpu_code";

// "sm_90a" -> 90.
int arch_number(const std::string& name) {
  static const std::regex sm(R"(^sm_(\d+)[a-z]?$)");
  std::smatch m;
  return std::regex_match(name, m, sm) ? std::atoi(m[1].str().c_str()) : -1;
}

std::string described(const ModuleCode& code) {
  std::string text = join(code.sass, ", ");
  if (!code.ptx.empty()) text += (text.empty() ? "PTX " : ", PTX ") + join(code.ptx, ", PTX ");
  return text;
}

}  // namespace

std::string gpu_code_mismatch(const Cell& cell, const std::map<std::string, ModuleCode>& modules) {
  const std::set<int> asked(cell.archs().begin(), cell.archs().end());
  if (asked.empty()) return {};
  if (modules.empty()) {
    return fmt::format("its modules hold no GPU code; the cell asks for archs {}", to_string(cell.archs()));
  }
  std::vector<std::string> wrong;
  for (const auto& [module, code] : modules) {
    std::set<int> held;
    for (const auto& s : code.sass) held.insert(arch_number(s));
    std::vector<std::string> missing;
    std::vector<std::string> extra;
    for (int a : asked) {
      if (!held.count(a)) missing.push_back("sm_" + std::to_string(a));
    }
    // A build that takes the arch list compiles every unit for exactly those archs.
    if (!cell.package->archs_env.empty()) {
      for (int h : held) {
        if (!asked.count(h)) extra.push_back("sm_" + std::to_string(h));
      }
    }
    if (missing.empty() && extra.empty()) continue;
    std::string why = fmt::format("{} holds {}", module, code.sass.empty() ? "no SASS" : join(code.sass, ", "));
    if (!missing.empty()) why += fmt::format(", not {}", join(missing, ", "));
    if (!extra.empty()) why += fmt::format(", and {} it was not asked for", join(extra, ", "));
    wrong.push_back(why);
  }
  if (wrong.empty()) return {};
  return fmt::format("the cell asks for archs {}, and {}", to_string(cell.archs()), join(wrong, "; "));
}

void add_gpu_code_steps(CellRun& run, const Cell& cell, const std::string& python, const std::filesystem::path& smoke,
                        const std::string& cuobjdump, std::shared_ptr<CellFindings> findings) {
  if (cell.rocm()) return;  // hipcc's code objects: not cuobjdump's
  Step list{"gpu code", gpu_code_argv(python, smoke.string(), cuobjdump), smoke.parent_path().string(), {}, {}};
  list.reports_facts = true;
  run.steps.push_back(std::move(list));
  run.steps.push_back(Step{"archs", {}, {}, {}, [cell, findings](StepContext& ctx) -> StepResult {
                             const auto text = fact(ctx.facts, kFactGpuCode);
                             if (!text) return fail("the GPU code listing reported nothing");
                             const auto j = nlohmann::json::parse(*text, nullptr, false);
                             if (!j.is_object()) return fail("the GPU code listing is not JSON: " + *text);
                             if (j.contains("unchecked")) {
                               ctx.facts["gpu_code_unchecked"] = j.value("unchecked", "");
                               return {};  // said in the log; the wheel is filed without it
                             }
                             std::map<std::string, ModuleCode> modules;
                             if (!j.contains("modules") || !j["modules"].is_object())
                               return fail("the GPU code listing has no modules: " + *text);
                             for (const auto& [module, code] : j["modules"].items()) {
                               ModuleCode m;
                               m.sass = code.value("sass", std::vector<std::string>());
                               m.ptx = code.value("ptx", std::vector<std::string>());
                               findings->gpu_code[module] = described(m);
                               modules.emplace(module, std::move(m));
                             }
                             if (const std::string wrong = gpu_code_mismatch(cell, modules); !wrong.empty()) {
                               return fail("GPU code: " + wrong,
                                           "a cache (local or remote) gave objects of another build, or the package "
                                           "ignored its arch list: rebuild with --no-cache and compare");
                             }
                             return {};
                           }});
}

}  // namespace fabuild
