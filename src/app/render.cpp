#include "app/render.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "app/msvc_capture.h"
#include "app/remote_trust.h"
#include "app/render_parts.h"
#include "matrix/select.h"
#include "source/kernel_units.h"
#include "util/byte_size.h"
#include "util/text.h"
#include "wheel/layout.h"

namespace fabuild {

namespace {

std::string env_line(const EnvList& env) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : env) parts.push_back(k + "=" + v);
  return join(parts, " ");
}

std::string cells_word(std::size_t n) { return n == 1 ? "cell" : "cells"; }

std::string heading(const Plan& plan) {
  std::string head = fmt::format("{}: {}, {} {} to build", plan.matrix_as_read(), plan.package, plan.cells.size(),
                                 cells_word(plan.cells.size()));
  if (plan.shard) head += fmt::format(" in shard {}/{}", plan.shard->index, plan.shard->count);
  if (plan.cells.size() != plan.matrix_cells) head += fmt::format(" (of {} in the matrix)", plan.matrix_cells);
  if (!plan.dropped.empty()) head += fmt::format(", {} dropped", plan.dropped.size());
  return head;
}

std::string budget_line(const Plan& plan) {
  const Budget& b = plan.budget;
  std::string line = fmt::format("budget: {:g} cores, {:.1f} GB for builds ({:.1f} GB available - {:.1f} GB reserve)",
                                 b.cores, b.memory_gb, b.available_gb, b.reserve_gb);
  if (b.max_cells > 0) line += fmt::format(", at most {} cells at once (-j)", b.max_cells);
  if (!plan.cells.empty()) line += fmt::format("; {} {} at once to start", plan.at_once, cells_word(plan.at_once));
  return line;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::vector<std::string> quoted;
  for (const auto& a : argv) quoted.push_back(a.find_first_of(" \t'\"") == std::string::npos ? a : "'" + a + "'");
  return join(quoted, " ");
}

std::string build_on(const Plan& plan, const PlannedCell& c) {
  if (c.cell.library()) return library_build_on(plan, c);
  if (!c.cell.command().empty()) {
    std::string line = "command: " + command_line(c.cell.command());
    return line.size() > 60 ? line.substr(0, 57) + "..." : line;
  }
  const ToolchainPlan t = plan.toolchain(c);
  const std::string torch = describe_torch(t);
  if (t.kind == Provision::kContainer) return fmt::format("container {}, {}", t.images.front(), torch);
  std::string from;
  if (const ToolkitChoice* choice = plan.toolkit_choice(c.cell)) {
    from = choice->install                    ? " (PyPI, to install)"
           : !choice->toolkit                 ? " (none found)"
           : choice->toolkit->origin == "pip" ? " (PyPI)"
                                              : " (" + choice->toolkit->home + ")";
  }
  return fmt::format("host {} {}{}, {}, {}", c.cell.rocm() ? "ROCm" : "CUDA", c.cell.cuda.toolkit.str(), from, t.python,
                     torch);
}

// What a cell builds for: "80;90", or the ROCm cell's "gfx90a;gfx942".

// Variables with the same value in every wheel cell, printed once above the per-cell ones.
EnvList common_env(const Plan& plan) {
  EnvList common;
  bool first = true;
  for (const auto& c : plan.cells) {
    if (c.cell.library()) continue;
    if (std::exchange(first, false)) common = c.env();
    const EnvList env = c.env();
    std::erase_if(common, [&](const auto& kv) { return std::find(env.begin(), env.end(), kv) == env.end(); });
  }
  return common;
}

// Which toolchain files this plan read (plan.h, toolchains_dir_for): the same matrix plans the
// same images and interpreters wherever fabuild is started.
std::string toolchains_line(const Plan& plan, const Files& disk) {
  if (plan.toolchains_dir.empty()) {
    return "none (no toolchains/ beside or above the matrix file; $FABUILD_TOOLCHAINS names a directory)";
  }
  std::vector<std::string> files;
  for (const char* name : {"host.yaml", "containers.yaml"}) {
    if (disk.is_file(plan.toolchains_dir / name)) files.emplace_back(name);
  }
  return fmt::format("{} ({})", plan.toolchains_dir.string(),
                     files.empty() ? "no host.yaml or containers.yaml" : join(files));
}

void print_cell_details(const Plan& plan, const PlannedCell& c, std::ostream& out) {
  if (c.cell.library()) return print_library_details(plan, c, out);
  fmt::print(out, "\n{}\n", c.id);
  fmt::print(out, "  wheel   {}\n", plan.filed_path(c));
  if (c.cell.command().empty()) {
    fmt::print(out, "  on      {}\n", describe(plan.toolchain(c)));
    if (const ToolkitChoice* choice = plan.toolkit_choice(c.cell))
      fmt::print(out, "  toolkit {}\n", choice->describe());
  } else {
    fmt::print(out, "  command {}\n", command_line(c.cell.command()));
  }
  fmt::print(out, "  source  {}\n", describe(plan.source_plan(c)));
  print_patch_lines(c, out);
  if (c.cell.profile != kDefaultProfile || !switches_off(c.cell).empty()) {
    fmt::print(out, "  profile {}: off {}\n", c.cell.profile, join(switches_off(c.cell), ", "));
  }
  if (const KernelUnits* units = units_of(plan, c)) {
    fmt::print(out, "  units   {} ({} of the source's {} kernel instantiations, the API and the scheduler{})\n",
               units->total, units->kernels, units->available,
               units->total > units->kernels + 2 ? ", split's combine" : "");
  }
  fmt::print(out, "  archs   {} ({})\n", archs_of(c.cell), c.cell.archs_from());
  // Its row (matrix/select.h): the cells that differ only in their Python tag.
  fmt::print(out, "  row     {}\n", row_of(c.cell));
  print_jobs_lines(c, out);
}

void print_cell_summary(const Plan& plan, const Files& files, std::ostream& out, bool details) {
  std::size_t id_width = 4;
  std::size_t arch_width = 5;
  for (const auto& c : plan.cells) {
    id_width = std::max(id_width, c.id.size());
    arch_width = std::max(arch_width, archs_of(c.cell).size());
  }
  fmt::print(out, "\n{:<{}}  {:<{}}  {:>4}  {:>6}  {}\n", "CELL", id_width, "ARCHS", arch_width, "JOBS", "PEAK",
             "BUILD ON");
  std::vector<std::string> notes;
  for (const auto& c : plan.cells) {
    fmt::print(out, "{:<{}}  {:<{}}  {:>4}  {:>6}  {}\n", c.id, id_width, archs_of(c.cell), arch_width,
               jobs_text(c.jobs), fmt::format("{:.0f} GB", c.jobs.peak_gb()), build_on(plan, c));
    for (const auto& n : c.jobs.notes) {
      if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    }
  }
  const PlannedCell& first = plan.cells.front();
  const auto count = [&](auto pred) { return std::count_if(plan.cells.begin(), plan.cells.end(), pred); };
  const auto rocm = count([](const auto& c) { return c.cell.rocm(); });
  const bool all_rocm = rocm == static_cast<std::ptrdiff_t>(plan.cells.size());
  // A cell under the memory gate is granted memory by its kernels' recorded peaks (the note says
  // them), not by the guess a thread: its PEAK is the grant, MAX_JOBS x the grant a job.
  const auto gated = count([](const auto& c) { return c.jobs.memory_gate; });
  const std::string by_guess =
      fmt::format("MAX_JOBS x {:.1f} GB per {}", first.cell.build().memory_per_thread_gb.value_or(kDefaultGbPerThread),
                  all_rocm ? "compile job" : "working nvcc thread");
  const std::string by_peaks = "the memory the gate shares between its compiles by their recorded peaks (note)";
  const bool all_gated = gated == static_cast<std::ptrdiff_t>(plan.cells.size());
  fmt::print(out, "\nJOBS is {}; PEAK is {}.\n",
             all_rocm
                 ? "MAX_JOBS (hipcc: one thread a job)"
                 : (rocm > 0 ? "MAX_JOBS x NVCC_THREADS (MAX_JOBS alone for ROCm cells)" : "MAX_JOBS x NVCC_THREADS"),
             all_gated   ? by_peaks
             : gated > 0 ? by_guess + "; for a cell under the memory gate, " + by_peaks
                         : by_guess);
  const auto wheel =
      std::find_if(plan.cells.begin(), plan.cells.end(), [](const auto& c) { return !c.cell.library(); });
  if (wheel != plan.cells.end()) {
    fmt::print(out, "every cell: {}\n", env_line(common_env(plan)));
    // A package that reads no arch variable (FlashAttention 3: sm_90a, and sm_80 unless its
    // SM80 switch is off) gets its archs through its switches; ROCm cells' archs are GPU_ARCHS.
    const PackagePreset& package = *wheel->cell.package;
    const std::string label =
        package.label_in_metadata
            ? fmt::format(", {}=<label>, e.g. {}", package.local_version_env, wheel->label())
            : fmt::format("; the label ({}) in the file name only (naming: upstream)", wheel->label());
    std::string archs = package.archs_env.empty() ? std::string() : package.archs_env + "=ARCHS";
    if (all_rocm) archs = "GPU_ARCHS=ARCHS";
    if (rocm > 0 && !all_rocm)
      archs += archs.empty() ? "GPU_ARCHS=ARCHS for ROCm cells" : " (GPU_ARCHS for ROCm cells)";
    fmt::print(out, "per cell:   {}{}{}\n", archs.empty() ? std::string() : archs + ", ",
               all_rocm ? "MAX_JOBS=JOBS" : "MAX_JOBS/NVCC_THREADS=JOBS", label);
  }
  fmt::print(out, "source:     {}\n", describe(plan.source_plan(first)));
  for (const auto& [key, choice] : plan.toolkits) {
    fmt::print(out, "toolkit:    CUDA {} ({}): {}\n", key.substr(0, key.find('|')), key.substr(key.find('|') + 1),
               choice.describe());
  }
  for (const auto& [tag, choice] : plan.pythons) {
    fmt::print(out, "python:     {}: {}\n", PythonTag::parse(tag)->dotted(),
               choice ? *choice : "none: " + choice.error().what);
  }
  fmt::print(out, "toolchains: {}\n", toolchains_line(plan, files));
  for (const auto& line : msvc_plan_lines(plan, details)) fmt::print(out, "{}\n", line);
  if (wheel != plan.cells.end()) {
    fmt::print(out,
               "wheels:     {}/{}<version>/torch<series>/{}/ (--list shows each cell's; -v shows each cell in full)\n",
               plan.wheelhouse, wheel->cell.package->id_prefix,
               all_rocm ? "rocm<xy>" : (rocm > 0 ? "cu<xyz> or rocm<xy>" : "cu<xyz>"));
  }
  if (std::any_of(plan.cells.begin(), plan.cells.end(), [](const auto& c) { return c.cell.library(); })) {
    fmt::print(out,
               "libraries:  {}/{}<version>/lib/cu<xyz>/<profile>/ (recipes/flash-attn-lib with the cell's archs and "
               "profile; cmake --build at CMAKE_BUILD_PARALLEL_LEVEL=MAX_JOBS; docs/library.md)\n",
               plan.wheelhouse, first.cell.package->id_prefix);
  }
  for (const auto& n : plan.notes) fmt::print(out, "note:       {}\n", n);
  for (const auto& n : notes) fmt::print(out, "note:       {}\n", n);
}

}  // namespace

std::string archs_of(const Cell& cell) { return cell.rocm() ? join(cell.rocm_archs(), ";") : to_string(cell.archs()); }

const KernelUnits* units_of(const Plan& plan, const PlannedCell& c) {
  const auto it = plan.units.find(c.id);
  return it == plan.units.end() ? nullptr : &it->second;
}

void add_units_json(nlohmann::ordered_json& j, const Plan& plan, const PlannedCell& c) {
  if (const KernelUnits* units = units_of(plan, c)) {
    j["units"] = {{"total", units->total}, {"kernels", units->kernels}, {"available", units->available}};
  }
}

// The compiler object cache (docs/performance.md), for cells fabuild builds itself.
std::string cache_line(const Plan& plan) {
  if (!plan.cache.enabled) return "object cache: off (" + plan.cache.off_because + ")";
  // A row: the cells that differ only in Python tag (matrix/select.h, row_of).
  std::set<std::string> rows;
  std::size_t wheels = 0;
  for (const auto& c : plan.cells) {
    if (c.cell.library()) continue;  // a library has no Python tags to share its kernels with
    rows.insert(row_of(c.cell));
    ++wheels;
  }
  std::string line = fmt::format("object cache: {} (trimmed to {} after the build)", plan.cache.dir,
                                 format_bytes(plan.cache.max_bytes));
  if (wheels > 0) {
    line += fmt::format(
        "; {} wheel cells in {} row{}: the other Python tags of a row start when its first has compiled and take "
        "its kernels from the cache",
        wheels, rows.size(), rows.size() == 1 ? "" : "s");
  }
  if (wheels < plan.cells.size()) line += "; library cells compile through it as CMake's compiler launcher";
  if (!plan.remote_cache.url.empty()) {
    line += fmt::format(
        "\nremote cache: {} (from {}; token from ${}): each row's kernels are fetched before it compiles{}\n"
        "remote cache {}; {}",
        plan.remote_cache.url, plan.remote_cache.from, plan.remote_cache.token_env,
        plan.remote_cache.write ? " and sent after" : "", plan.remote_cache.write_why,
        describe_trust(plan.remote_cache.trust));
  }
  return line;
}

void print_plan(const Plan& plan, const Files& files, std::ostream& out, bool details) {
  fmt::print(out, "{}\n{}\n", heading(plan), budget_line(plan));
  if (std::any_of(plan.cells.begin(), plan.cells.end(),
                  [](const PlannedCell& c) { return c.cell.command().empty(); })) {
    fmt::print(out, "{}\n", cache_line(plan));
  }
  if (!plan.cells.empty()) {
    print_cell_summary(plan, files, out, details);
    if (details) {
      for (const auto& c : plan.cells) print_cell_details(plan, c, out);
    }
  }
  if (!plan.dropped.empty()) {
    fmt::print(out, "\ndropped by the compatibility rules ({}):\n", plan.dropped.size());
    for (const auto& d : plan.dropped) fmt::print(out, "  {}\n    {}\n", d.cell.id(), join(d.reasons, "\n    "));
  }
  if (!plan.warnings.empty()) {
    fmt::print(out, "\nwarnings ({}):\n", plan.warnings.size());
    for (const auto& w : plan.warnings) fmt::print(out, "  {}\n", w);
  }
}

void print_cell_table(const Plan& plan, std::ostream& out) {
  std::size_t id_width = 4;
  std::size_t arch_width = 5;
  for (const auto& c : plan.cells) {
    id_width = std::max(id_width, c.id.size());
    arch_width = std::max(arch_width, archs_of(c.cell).size());
  }
  fmt::print(out, "{:<{}}  {:<{}}  {:>8}  {}\n", "CELL", id_width, "ARCHS", arch_width, "JOBS", "WHEELHOUSE");
  for (const auto& c : plan.cells) {
    fmt::print(out, "{:<{}}  {:<{}}  {:>8}  {}\n", c.id, id_width, archs_of(c.cell), arch_width, jobs_text(c.jobs),
               std::filesystem::path(plan.filed_path(c)).parent_path().string());
  }
}

void print_patch_lines(const PlannedCell& c, std::ostream& out) {
  for (const auto& patch : c.patches)
    fmt::print(out, "  patch   {} (sha256 {})\n", patch.name, patch.sha256.substr(0, 16));
}

void print_jobs_lines(const PlannedCell& c, std::ostream& out) {
  fmt::print(out, "  jobs    MAX_JOBS={}{}, up to {:.0f} GB ({:.1f} GB per job)\n", c.jobs.max_jobs,
             c.jobs.nvcc_threads > 0 ? fmt::format(" NVCC_THREADS={}", c.jobs.nvcc_threads) : std::string(),
             c.jobs.peak_gb(), c.jobs.gb_per_job);
  if (c.cell.build().timeout_s) fmt::print(out, "  timeout {:g}s\n", *c.cell.build().timeout_s);
  if (!c.env().empty()) fmt::print(out, "  env     {}\n", env_line(c.env()));
  for (const auto& note : c.jobs.notes) fmt::print(out, "  note    {}\n", note);
}

}  // namespace fabuild
