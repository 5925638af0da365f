// The plan as JSON (--list --format json, --dry-run --format json): one object per cell and
// the whole plan, the same facts the printed plan shows (render.cpp).

#include <filesystem>

#include <fmt/format.h>

#include "app/remote_trust.h"
#include "app/render.h"
#include "app/render_parts.h"
#include "costs/row_costs.h"
#include "engine/cell_env.h"
#include "matrix/axes.h"
#include "matrix/select.h"

namespace fabuild {

nlohmann::ordered_json toolkit_json(const Cell& cell, const ToolkitChoice& choice) {
  nlohmann::ordered_json tk = {{"source", to_string(cell.toolkit_source())}};
  if (choice.toolkit) {
    tk["origin"] = choice.toolkit->origin;
    tk["cuda_home"] = choice.toolkit->home;
    tk["to_install"] = choice.install.has_value();
    if (!choice.toolkit->build.empty()) tk["nvcc"] = choice.toolkit->build;
  } else {
    tk["origin"] = "none";
    tk["error"] = choice.toolkit.error().what;
  }
  return tk;
}

nlohmann::ordered_json cell_json(const Plan& plan, const PlannedCell& c) {
  if (c.cell.library()) return library_cell_json(plan, c);
  const Cell& cell = c.cell;
  const std::string wheel_path = plan.filed_path(c);
  const ToolchainPlan toolchain = plan.toolchain(c);
  nlohmann::ordered_json j = {
      {"id", c.id},
      {"artifact", "wheel"},
      {"package", cell.package->name},
      {"version", cell.version.str()},
      {"torch", cell.torch.str()},
      {"torch_series", cell.torch_series().str()},
      {"backend", to_string(cell.cuda.backend)},
      {"cuda", cell.cuda.toolkit.str()},
      {"torch_cuda", cell.wheel_cuda().str()},
      {"cuda_tag", cell.gpu_tag()},
      {"torch_index", cell.torch_index_tag()},
      {"python", cell.python.str()},
      {"python_tag", cell.python_tag()},
      {"abi_tag", cell.abi_tag()},
      {"platform", to_string(cell.platform)},
      {"cxx11_abi", to_string(cell.abi)},
      {"archs", archs_of(cell)},
      {"profile", cell.profile},
      {"switches_off", switches_off(cell)},
      {"label", c.label()},
      {"row", row_of(cell)},
      {"row_key", remote_row_key(cell)},
      {"wheel", wheel_path},
      {"wheelhouse_dir", std::filesystem::path(wheel_path).parent_path().string()},
      {"provision", to_string(cell.provision)},
      {"torch_requirement", toolchain.torch_requirement},
      {"torch_from", toolchain.torch_from.empty() ? "pip's index" : toolchain.torch_from},
      {"source", plan.source_plan(c).requirement},
      {"command", cell.command()},
  };
  for (const AxisRow* row : declared_axes()) j[std::string(row->key)] = cell.value(row->axis);
  add_jobs_json(j, c);
  if (cell.provision == Provision::kContainer) {
    j["images"] = toolchain.images;
  } else {
    j["cuda_homes"] = toolchain.cuda_homes;
  }
  j["python_interpreter"] = toolchain.python;
  if (const ToolkitChoice* choice = plan.toolkit_choice(cell)) j["toolkit"] = toolkit_json(cell, *choice);
  if (cell.build().timeout_s) j["timeout_s"] = *cell.build().timeout_s;
  if (cell.abi3()) {
    std::vector<std::string> tags;
    for (const auto& t : cell.abi3_pythons) tags.push_back(t.str());
    j["abi3_serves"] = tags;
  }
  if (cell.stable()) j["stable_floor"] = cell.stable_floor->str();  // docs/stable-abi.md
  if (const auto sweep = plan.sweeps.find(c.id); sweep != plan.sweeps.end()) {
    nlohmann::ordered_json releases = nlohmann::ordered_json::array();
    for (const TorchRelease& t : sweep->second)
      releases.push_back({{"torch", t.version.str()}, {"cuda", t.cuda.str()}});
    j["checked_under"] = std::move(releases);
  }
  add_units_json(j, plan, c);
  add_patches_and_notes_json(j, c);
  return j;
}

nlohmann::ordered_json plan_json(const Plan& plan) {
  nlohmann::ordered_json cells = nlohmann::ordered_json::array();
  for (const auto& c : plan.cells) cells.push_back(cell_json(plan, c));
  nlohmann::ordered_json dropped = nlohmann::ordered_json::array();
  for (const auto& d : plan.dropped) dropped.push_back({{"id", d.cell.id()}, {"reasons", d.reasons}});
  nlohmann::ordered_json j = {
      {"matrix", plan.matrix_file},
      {"sets", plan.sets},
      {"package", plan.package},
      {"wheelhouse", plan.wheelhouse},
      {"matrix_cells", plan.matrix_cells},
      {"budget",
       {{"cores", plan.budget.cores},
        {"memory_gb", plan.budget.memory_gb},
        {"available_gb", plan.budget.available_gb},
        {"reserve_gb", plan.budget.reserve_gb},
        {"max_cells", plan.budget.max_cells},
        {"at_once", plan.at_once}}},
      {"cells", cells},
      {"dropped", dropped},
      {"warnings", plan.warnings},
      {"notes", plan.notes},
  };
  if (plan.shard) j["shard"] = fmt::format("{}/{}", plan.shard->index, plan.shard->count);
  // Whether the run writes the remote and why, as the table's "remote cache" line and
  // report.json's remote_cache say it (docs/security.md); null: no remote.
  const RemoteCacheSettings& remote = plan.remote_cache;
  j["remote_cache"] = remote.url.empty() ? nlohmann::ordered_json(nullptr)
                                         : nlohmann::ordered_json{{"url", remote.url},
                                                                  {"from", remote.from},
                                                                  {"write", remote.write},
                                                                  {"why", remote.write_why},
                                                                  {"trust", describe_trust(remote.trust)}};
  return j;
}

void add_jobs_json(nlohmann::ordered_json& j, const PlannedCell& c) {
  j["max_jobs"] = c.jobs.max_jobs;
  j["nvcc_threads"] = c.jobs.nvcc_threads;
  j["peak_memory_gb"] = c.jobs.peak_gb();
  nlohmann::ordered_json env = nlohmann::ordered_json::object();
  for (const auto& [k, v] : c.env()) env[k] = v;
  j["env"] = env;
}

void add_patches_and_notes_json(nlohmann::ordered_json& j, const PlannedCell& c) {
  if (!c.patches.empty()) {
    nlohmann::ordered_json patches = nlohmann::ordered_json::array();
    for (const auto& p : c.patches) patches.push_back({{"file", p.name}, {"sha256", p.sha256}});
    j["patches"] = patches;
  }
  if (!c.jobs.notes.empty()) j["notes"] = c.jobs.notes;
}

}  // namespace fabuild
