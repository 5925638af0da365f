// How the plan shows a library cell (artifact: library, docs/library.md): what it builds with,
// what it files, and its JSON, which has no torch or Python.

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "app/render_parts.h"
#include "engine/cell_env.h"
#include "util/text.h"
#include "wheel/layout.h"

namespace fabuild {

std::string library_build_on(const Plan& plan, const PlannedCell& c) {
  std::string from;
  if (const ToolkitChoice* choice = plan.toolkit_choice(c.cell)) {
    from = choice->install                    ? " (PyPI, to install)"
           : !choice->toolkit                 ? " (none found)"
           : choice->toolkit->origin == "pip" ? " (PyPI)"
                                              : " (" + choice->toolkit->home + ")";
  }
  return fmt::format("host CUDA {}{}, cmake + ninja, no torch", c.cell.cuda.toolkit.str(), from);
}

void print_library_details(const Plan& plan, const PlannedCell& c, std::ostream& out) {
  const Cell& cell = c.cell;
  fmt::print(out, "\n{}\n", c.id);
  fmt::print(out, "  library {}\n", plan.filed_path(c));
  fmt::print(out, "  on      {}\n", library_build_on(plan, c));
  if (const ToolkitChoice* choice = plan.toolkit_choice(cell)) fmt::print(out, "  toolkit {}\n", choice->describe());
  fmt::print(out, "  source  {}\n", describe(plan.source_plan(c)));
  print_patch_lines(c, out);
  fmt::print(out, "  profile {}: off {}\n", cell.profile,
             switches_off(cell).empty() ? std::string("nothing") : join(switches_off(cell), ", "));
  if (const KernelUnits* units = units_of(plan, c)) {
    fmt::print(out, "  units   {} ({} of the source's {} kernel files the library uses, {})\n", units->total,
               units->kernels, units->available, join(units->others, ", "));
  }
  fmt::print(out, "  archs   {} ({})\n", to_string(cell.archs()), cell.archs_from());
  fmt::print(out,
             "  recipe  recipes/flash-attn-lib: configure, build (CMAKE_BUILD_PARALLEL_LEVEL=MAX_JOBS), install, "
             "verify, a C++ consumer with find_package, pack, file\n");
  print_jobs_lines(c, out);
}

nlohmann::ordered_json library_cell_json(const Plan& plan, const PlannedCell& c) {
  const Cell& cell = c.cell;
  const std::string path = plan.filed_path(c);
  nlohmann::ordered_json j = {
      {"id", c.id},
      {"artifact", "library"},
      {"package", cell.package->name},
      {"version", cell.version.str()},
      {"backend", to_string(cell.cuda.backend)},
      {"cuda", cell.cuda.toolkit.str()},
      {"cuda_tag", cell.gpu_tag()},
      {"platform", to_string(cell.platform)},
      {"archs", to_string(cell.archs())},
      {"profile", cell.profile},
      {"switches_off", switches_off(cell)},
      {"library", path},
      {"wheelhouse_dir", std::filesystem::path(path).parent_path().string()},
      {"provision", to_string(cell.provision)},
      {"source", plan.source_plan(c).requirement},
  };
  add_jobs_json(j, c);
  if (const ToolkitChoice* choice = plan.toolkit_choice(cell)) j["toolkit"] = toolkit_json(cell, *choice);
  if (cell.build().timeout_s) j["timeout_s"] = *cell.build().timeout_s;
  add_units_json(j, plan, c);
  add_patches_and_notes_json(j, c);
  return j;
}

}  // namespace fabuild
