#include "app/plan.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "app/load_spec.h"
#include "app/object_cache.h"
#include "app/recorded_costs.h"
#include "app/remote_cache.h"
#include "app/torch_plan.h"
#include "costs/ci_estimate.h"
#include "costs/unit_peaks.h"
#include "engine/forecast.h"
#include "matrix/loader.h"
#include "matrix/select.h"
#include "matrix/values.h"
#include "provision/container.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/text.h"
#include "wheel/layout.h"

namespace fabuild {

namespace {

BudgetSpec effective_budget(const MatrixSpec& spec, const Options& o) {
  BudgetSpec b = spec.budget;
  if (o.cores) b.cores = o.cores;
  if (o.memory_gb) b.memory_gb = o.memory_gb;
  if (o.max_cells) b.max_cells = o.max_cells;
  return b;
}

// torch_index: a URL as it is; anything else is a directory of wheels, relative to the matrix.
std::string torch_index(const MatrixSpec& spec, const std::string& matrix_dir, const Files& files) {
  const std::string& index = spec.torch_index;
  if (index.empty() || index.find("://") != std::string::npos) return index;
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(index).is_absolute() ? fs::path(index) : fs::path(matrix_dir) / index;
  if (!files.is_directory(dir)) {
    throw config_error(
        Location{spec.file, 0, 0},
        fmt::format("torch_index '{}' is neither a URL nor a directory ({} does not exist)", index, dir.string()),
        "give an index URL (https://...) or a directory of wheels (filled with `pip download`)");
  }
  return files.resolve(dir).value_or(dir).string();
}

// The patch files each rule names, read once: a missing one is a configuration error at the
// rule, before anything is built.
std::map<std::string, PatchFile> read_patch_files(const MatrixSpec& spec, const std::string& matrix_dir,
                                                  const Files& disk) {
  namespace fs = std::filesystem;
  std::map<std::string, PatchFile> files;
  for (const auto& rule : spec.patches) {
    for (const auto& name : rule.files) {
      if (files.count(name)) continue;
      const fs::path path = fs::path(name).is_absolute() ? fs::path(name) : fs::path(matrix_dir) / name;
      if (!disk.is_file(path)) {
        throw config_error(rule.where, fmt::format("patch file {} does not exist ({})", name, path.string()),
                           "patch files are named relative to the matrix file");
      }
      const Expected<Sha256> sum = sha256_of_file(path);
      if (!sum) throw config_error(rule.where, sum.error().what, "check the patch file's permissions");
      files[name] = PatchFile{name, disk.resolve(path).value_or(path).string(), hex(*sum)};
    }
  }
  return files;
}

}  // namespace

const ToolkitChoice* Plan::toolkit_choice(const Cell& cell) const {
  const auto it = toolkits.find(toolkit_key(cell));
  return it == toolkits.end() ? nullptr : &it->second;
}

std::string toolkit_key(const Cell& cell) {
  if (cell.provision != Provision::kHost || cell.rocm() || !cell.command().empty()) return {};
  return cell.cuda.toolkit.str() + "|" + to_string(cell.toolkit_source());
}

void resolve_toolkits(Plan& plan, HostProbe& probe, const std::filesystem::path& root) {
  for (const auto& p : plan.cells) {
    const std::string key = toolkit_key(p.cell);
    if (key.empty() || plan.toolkits.count(key)) continue;
    // A Windows cell's toolkit is looked for on a Windows host, a Linux cell's on Linux: this
    // host builds only its own platform's cells (site_build.cpp).
    if ((p.cell.platform == Platform::kWinAmd64) != probe.windows()) continue;
    plan.toolkits.emplace(key, choose_toolkit(probe, p.cell.cuda.toolkit, p.cell.toolkit_source(), root));
  }
}

void resolve_pythons(Plan& plan, HostProbe& probe) {
  for (const auto& p : plan.cells) {
    const Cell& c = p.cell;
    if (c.library() || c.provision != Provision::kHost || !c.command().empty()) continue;
    if ((c.platform == Platform::kWinAmd64) != probe.windows() || plan.pythons.count(c.python.str())) continue;
    const Probed<Interpreter> python = probe.find_python(c.python);
    plan.pythons.emplace(c.python.str(), python.found ? Expected<std::string>(python.found->path)
                                                      : fail(probe.missing_python_here(c.python, python.tried)));
  }
}

std::string PlannedCell::label() const { return local_label(cell); }

EnvList PlannedCell::env() const { return cell_build_env(cell); }

std::string Plan::filed_path(const PlannedCell& p) const {
  const std::string name = p.cell.library() ? library_filename(p.cell) : wheel_filename(p.cell);
  // The platform's separators throughout (wheelhouse_subdir is written with '/').
  return (std::filesystem::path(wheelhouse) / wheelhouse_subdir(p.cell) / name).make_preferred().string();
}

ToolchainPlan Plan::toolchain(const PlannedCell& p) const {
  ToolchainPlan t = plan_toolchain(p.cell, container, container_images);
  // As python_env installs it: --index-url <index>/<tag>, or --find-links for a directory.
  if (!torch_index.empty()) {
    t.torch_from = std::filesystem::path(torch_index).is_absolute() ? torch_index + " (wheels, no index)"
                                                                    : torch_index + "/" + t.torch_index;
  }
  return t;
}

SourcePlan Plan::source_plan(const PlannedCell& p) const { return plan_source(p.cell, source_of(p.cell)); }

std::filesystem::path toolchains_dir_for(const std::string& matrix_file, const Environment& env, const Files& files) {
  namespace fs = std::filesystem;
  if (const auto named = env.get("FABUILD_TOOLCHAINS"); named && !named->empty()) return fs::absolute(*named);
  for (fs::path dir = fs::absolute(matrix_file).lexically_normal().parent_path(); !dir.empty();
       dir = dir.parent_path()) {
    if (files.is_directory(dir / "toolchains")) return dir / "toolchains";
    if (dir == dir.root_path()) break;
  }
  return {};
}

std::string host_toolchains_file(const Plan& plan) {
  return plan.toolchains_dir.empty() ? std::string() : (plan.toolchains_dir / "host.yaml").string();
}

// A label without {gpu}, {torch} or {abi} (naming: upstream says cu12, not cu128) may give two
// cells one file name in different wheelhouse directories: a release laid out flat, as
// upstream's is and get_wheel_url expects, holds only one of them.
void warn_flat_name_clashes(const std::vector<Cell>& cells, std::vector<std::string>& warnings) {
  std::map<std::string, std::string> first;  // file name -> the id of the first cell with it
  for (const Cell& cell : cells) {
    if (cell.library()) continue;
    const std::string& label = cell.package->label;
    if (label.find("{gpu}") != std::string::npos && label.find("{torch}") != std::string::npos &&
        label.find("{abi}") != std::string::npos) {
      continue;
    }
    const auto [it, added] = first.emplace(wheel_filename(cell), cell.id());
    if (!added) {
      warnings.push_back(
          fmt::format("{} and {} both name their wheel {}: a flat release (as FlashAttention's, which "
                      "get_wheel_url reads) holds one of them; exclude one, or put {{gpu}} in the label",
                      it->second, cell.id(), it->first));
    }
  }
}

namespace {

// --compile-share: the first cell of the one row the filters pick, checked for what a share
// needs (docs/ci.md, "Compile shares"). Throws a config error (exit 2) otherwise.
std::vector<Cell> share_cell(std::vector<Cell> cells, const Options& options, const Plan& plan) {
  const Shard share = *options.compile_share;
  const std::string flag = fmt::format("--compile-share {}/{}", share.index, share.count);
  if (options.shard) {
    throw config_error(Location{}, flag + " compiles a share of one row; it does not combine with --shard",
                       "select the row with --only (the --ci-matrix JSON gives each compile job its arguments)");
  }
  if (!plan.cache.enabled) {
    throw config_error(Location{},
                       flag + " compiles through the object cache, which is off (" + plan.cache.off_because + ")",
                       "drop --no-cache / cache: false for a share job");
  }
  if (plan.remote_cache.url.empty()) {
    throw config_error(Location{},
                       flag +
                           ": a share's objects go to the remote cache for the row's finishing job, "
                           "and none is set",
                       "set FABUILD_CACHE_REMOTE (or cache.remote in the matrix) to the remote every job shares");
  }
  if (!plan.remote_cache.write) {
    throw config_error(Location{},
                       fmt::format("{}: a share exists to send its objects to the remote, and this run may not write "
                                   "it ({})",
                                   flag, plan.remote_cache.write_why),
                       "run compile shares from a trusted workflow (docs/security.md), or set "
                       "FABUILD_CACHE_REMOTE_WRITE=true where the run is trusted");
  }
  if (cells.empty()) return cells;
  const auto rows = rows_of(cells);
  if (rows.size() != 1) {
    throw config_error(Location{},
                       fmt::format("{} takes the cells of one row; the filters pick {} rows", flag, rows.size()),
                       "select one row with --only <its cell ids> (--list --format json names each cell's row)");
  }
  const Cell& first = cells[rows.front().front()];
  if (first.library() || !first.command().empty()) {
    throw config_error(Location{}, flag + ": compile shares are for wheel cells that fabuild builds itself",
                       "build library and command cells in one job");
  }
  return {first};
}

// Each cell's shape; a cell whose row has recorded kernel peaks (here or on the remote, its own
// or, for a row not yet built, its nearest torch sibling's: plan.borrowed) is gated by them
// (costs/unit_peaks.h), so the plan, --dry-run and the run agree on its MAX_JOBS.
std::vector<JobSettings> job_shapes(const std::vector<Cell>& cells, const std::vector<std::string>& rows, Plan& plan,
                                    const System& system) {
  std::vector<JobSettings> shapes;
  shapes.reserve(cells.size());
  for (const auto& cell : cells) shapes.push_back(job_shape(cell));
  const auto eligible = [&](std::size_t i) { return !rows[i].empty() && gate_applies(cells[i]); };
  bool any = false;
  for (std::size_t i = 0; i < cells.size() && !any; ++i) any = eligible(i);
  if (!any) return shapes;  // no record read, no remote asked
  const CiCosts& recorded = plan.recorded.emplace(ci_costs(cells, plan.remote_cache, plan.torch_series, system));
  if (!recorded.remote_trouble.empty()) {
    plan.warnings.push_back(
        fmt::format("the rows' records were not read from the remote cache: {}", recorded.remote_trouble));
  }
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (!eligible(i)) continue;
    const std::string key = remote_row_key(cells[i]);
    const auto it = recorded.rows.find(key);
    if (it == recorded.rows.end()) continue;
    const auto peaks = kernel_peaks(it->second, shapes[i].nvcc_threads);
    if (!peaks) continue;
    gate_by_recorded_peaks(shapes[i], *peaks, plan.budget);
    if (const auto b = recorded.borrowed.find(key); b != recorded.borrowed.end()) {
      shapes[i].notes.back() +=
          fmt::format(" (torch {}'s record of the same kernels: this row has none yet)", b->second.str());
      plan.borrowed.try_emplace(key, BorrowedCosts{b->second, it->second});
    }
  }
  return shapes;
}

}  // namespace

Plan make_plan(const Options& options, const System& system) {
  const Resources machine = system.machine();
  // --ci-matrix plans jobs for runners, not for this machine: a matrix that names no platform
  // stays linux_x86_64 there.
  MatrixSpec spec = load_spec(options, options.ci_matrix.empty() ? system.platform : std::string());
  std::optional<Version> verify_from;  // --verify-torch: the index is asked from its oldest series on
  for (const std::string& s : options.verify_torch) {
    const auto v = Version::parse(trim(s));
    if (!v || v->release().size() != 2) {
      throw config_error(Location{}, fmt::format("--verify-torch {}: not a torch series", s),
                         "write the series to check the filed wheels under, e.g. --verify-torch 2.12,2.13");
    }
    if (!verify_from || *v < *verify_from) verify_from = *v;
  }
  TorchResolution torch = resolve_torch(spec, system, verify_from);
  std::vector<Version> torch_series;  // the rows a row not yet built may plan by (costs/borrowed.h)
  for (const auto& t : spec.torch) torch_series.push_back(t.value);
  Expansion all = expand(spec, {.strict = options.strict});
  const std::size_t matrix_cells = all.cells.size();
  Expansion picked = select_cells(std::move(all), options.filters);

  Plan plan;
  plan.matrix_file = options.matrix;
  plan.torch_series = std::move(torch_series);
  for (const auto& set : options.sets) plan.sets.push_back(set.flag());
  plan.package = spec.package->name;
  plan.wheelhouse = options.output_dir.value_or(spec.wheelhouse);
  if (system.files->exists(plan.wheelhouse) && !system.files->is_directory(plan.wheelhouse)) {
    throw config_error(Location{options.output_dir ? std::string() : spec.file, 0, 0},
                       fmt::format("the wheelhouse {} is a file, not a directory", plan.wheelhouse),
                       options.output_dir ? "give -o a directory (it is made when missing)"
                                          : "set wheelhouse: to a directory (it is made when missing)");
  }
  plan.matrix_cells = matrix_cells;
  plan.shard = options.shard;
  plan.budget = make_budget(machine, effective_budget(spec, options));
  plan.machine_cores = static_cast<int>(std::ceil(machine.cores));
  plan.warnings = std::move(picked.warnings);
  for (std::string& w : empty_ranges(torch)) plan.warnings.push_back(std::move(w));
  warn_flat_name_clashes(picked.cells, plan.warnings);
  plan.notes = std::move(picked.notes);
  plan.dropped = std::move(picked.dropped);
  plan.source = spec.source;
  plan.frontend = spec.frontend;
  plan.python_env = spec.python_env;
  plan.matrix_dir = std::filesystem::absolute(options.matrix).parent_path().string();
  plan.torch_index = torch_index(spec, plan.matrix_dir, *system.files);
  plan.container = spec.container;
  plan.ci = spec.ci;
  plan.toolchains_dir = toolchains_dir_for(options.matrix, system.env, *system.files);
  plan.cache_root = system.cache_dir();
  plan.cache = object_cache_settings(spec.cache, options, plan.matrix_dir, plan.cache_root);
  plan.remote_cache = remote_cache_settings(spec.cache, plan.cache.enabled, system.env, *system.files);
  const std::map<std::string, PatchFile> patch_files = read_patch_files(spec, plan.matrix_dir, *system.files);
  if (std::any_of(picked.cells.begin(), picked.cells.end(),
                  [](const Cell& c) { return c.provision == Provision::kContainer; })) {
    if (!plan.toolchains_dir.empty()) {
      plan.container_images = load_container_images((plan.toolchains_dir / "containers.yaml").string());
    }
  }

  std::vector<std::string>& ids = picked.ids;  // as the expansion spelled them, unless sharded
  if (options.shard) ids.clear();
  if (options.compile_share) {
    plan.compile_share = options.compile_share;
    plan.share_costs = options.share_costs;
    picked.cells = share_cell(std::move(picked.cells), options, plan);
    ids.clear();
  }
  const auto cells = std::make_shared<const std::vector<Cell>>(
      options.shard ? shard_cells(std::move(picked.cells), *options.shard, options.rows()) : std::move(picked.cells));
  const bool spelled = ids.size() == cells->size();
  std::vector<std::string> rows(cells->size());
  if (plan.cache.enabled) {
    for (std::size_t i = 0; i < cells->size(); ++i) {
      if ((*cells)[i].command().empty()) rows[i] = compile_row((*cells)[i]);
    }
  }
  Forecast forecast_ = forecast(*cells, job_shapes(*cells, rows, plan, system), plan.budget, after_first_of_row(rows));
  plan.at_once = forecast_.at_once;
  plan.cells.reserve(cells->size());
  for (std::size_t i = 0; i < cells->size(); ++i) {
    const Cell& cell = (*cells)[i];
    std::string id = spelled ? std::move(ids[i]) : cell.id();
    PlannedCell& p = plan.cells.emplace_back(
        PlannedCell{cells, cell, {}, std::move(id), std::move(forecast_.jobs[i]), std::move(rows[i])});
    // Without patch rules no cell has patches: a large plan need not read each cell for them.
    if (!patch_files.empty()) {
      for (const auto& name : cell.patches) p.patches.push_back(patch_files.at(name));
    }
    if (!options.verify_torch.empty()) {
      plan_verify(plan, p, torch, options.verify_torch);
    } else if (cell.stable()) {
      plan_sweep(plan, p, torch, picked.stable[p.id]);
      if (options.no_sweep) {  // the torch it is built against only
        std::erase_if(plan.sweeps[p.id],
                      [&](const TorchRelease& t) { return t.version.series() != cell.torch.series(); });
      }
    }
  }
  plan.verify_only = !options.verify_torch.empty();
  plan.torch = std::move(torch);
  if (!plan.sweeps.empty() && !plan.verify_only) note_filed_checks(plan);
  return plan;
}

void count_units(Plan& plan) {
  std::map<std::string, std::optional<KernelUnits>> counted;  // cells share a few sources and profiles
  for (const PlannedCell& c : plan.cells) {
    const Cell& cell = c.cell;
    const SourceSpec& source = plan.source_of(cell);
    if (source.kind != SourceSpec::Kind::kPath || (!cell.library() && !cell.package->counts_hopper_units)) continue;
    const std::filesystem::path root = std::filesystem::path(plan.matrix_dir) / source.location;  // absolute stays
    const std::vector<std::string> off = switches_off(cell);
    const std::string key =
        fmt::format("{}|{}|{}|{}|{}", root.string(), cell.library() ? to_string(cell.archs()) : "wheel", join(off, ","),
                    cell.package->source_subdir, cell.library() ? cell.package->library_flavour : "");
    auto [it, fresh] = counted.try_emplace(key);
    if (fresh) {
      it->second = cell.library() ? count_library_units(root, cell.package->library_flavour, off, cell.archs())
                                  : count_hopper_units(root / cell.package->source_subdir, off);
    }
    if (it->second) plan.units[c.id] = *it->second;
  }
}

}  // namespace fabuild
