#include "app/publish_build.h"

#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "app/compile_steps.h"
#include "app/remote_cache.h"
#include "app/remote_trust.h"
#include "app/sweep_steps.h"
#include "engine/facts.h"
#include "publish/grid.h"
#include "publish/publish.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text.h"
#include "wheel/layout.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

double seconds(std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000.0; }

// report.json's status: the summary table's word (engine/outcome.h), in lower case.
std::string status_word(CellResult r) { return to_lower(to_string(r)); }

// `path` relative to the wheelhouse when it lies inside it, else as it is.
std::string inside(const fs::path& wheelhouse, const std::string& path) {
  if (path.empty()) return {};
  const fs::path rel = fs::path(path).lexically_relative(wheelhouse);
  return rel.empty() || *rel.begin() == ".." ? path : rel.generic_string();
}

// "host: nvcc 13.0, gcc 12.2.0, python 3.12, torch 2.11.0" from what the manifest recorded.
std::string built_on(const FiledCell& f) {
  if (!f.toolchain.empty()) return f.toolchain;
  std::vector<std::string> parts;
  for (const char* key : {"nvcc", "compiler", "python", "torch", "cmake"}) {
    if (auto it = f.versions.find(key); it != f.versions.end()) parts.push_back(std::string(key) + " " + it->second);
  }
  return parts.empty() ? std::string() : "host: " + fmt::format("{}", fmt::join(parts, ", "));
}

CellRecord base_record(const CellOutcome& o, const fs::path& wheelhouse, const Files& files) {
  CellRecord r;
  r.id = o.id;
  r.status = status_word(o.result);
  if (o.result != CellResult::kOk && o.result != CellResult::kUpToDate) r.detail = what_happened(o);
  if (o.started_at) r.start_s = seconds(*o.started_at);
  if (o.started_at && o.released_at) r.held_s = seconds(*o.released_at - *o.started_at);
  r.duration_s = seconds(o.elapsed);
  r.max_jobs = o.max_jobs;
  r.nvcc_threads = o.nvcc_threads;
  if (!o.log_path.empty() && files.exists(o.log_path)) r.log = inside(wheelhouse, o.log_path);
  return r;
}

CellRecord cell_record(const Plan& plan, const PlannedCell& p, const CellOutcome& o, const fs::path& wheelhouse,
                       const std::map<std::string, FiledCell>& filed, const Files& files) {
  CellRecord r = base_record(o, wheelhouse, files);
  r.memory_gb = o.max_jobs * p.jobs.gb_per_job;
  r.dir = wheelhouse_subdir(p.cell);
  r.library = p.cell.library();
  r.python = r.library ? std::string() : p.cell.python.str();
  r.platform = to_string(p.cell.platform);
  r.toolchain = r.library ? "host: CUDA " + p.cell.cuda.toolkit.str() + ", cmake" : describe(plan.toolchain(p));
  if (auto f = filed.find(p.id); f != filed.end()) {
    r.versions = f->second.versions;
    r.needs = f->second.needs;
    r.gpu_code = f->second.gpu_code;
    r.stable_floor = f->second.stable_floor;
    r.torch_proofs = f->second.torch_proofs;
    if (const std::string on = built_on(f->second); !on.empty()) r.toolchain = on;
    if (r.status == "ok" || r.status == "up to date") r.wheel = f->second.wheel;
  }
  if (const auto share = fact(o.facts, kFactShare); share && o.result == CellResult::kOk) {
    // A compile share files no wheel: the summary says what it did instead.
    const nlohmann::json j = nlohmann::json::parse(*share, nullptr, false);
    if (j.is_object()) {
      r.detail =
          fmt::format("compile share {}: {} compiled, {} from the cache, {} left to other shares",
                      j.value("share", "?"), j.value("compiled", 0), j.value("hits", 0), j.value("placeholders", 0));
    }
  }
  if (const auto checked = fact(o.facts, kFactChecked)) r.checked = split(*checked, ',');
  if (const auto setup = fact(o.facts, kFactJobSetup)) {
    if (const double s = std::strtod(setup->c_str(), nullptr); s >= 0) r.job_setup_s = s;
  }
  if (r.wheel.empty() && o.result == CellResult::kOk) {
    // A cell with a `command:` files whatever it wrote; its wheel, if it made one.
    for (const auto& name : o.filed) {
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".whl") == 0) {
        r.wheel = inside(wheelhouse, (fs::path(o.output_dir) / name).string());
        break;
      }
    }
  }
  return r;
}

void say_published(const Published& p, const std::string& wheelhouse, std::ostream& out) {
  const auto in_house = [&](const std::string& rel) { return (fs::path(wheelhouse) / rel).generic_string(); };
  std::size_t projects = p.trees.empty() ? 0 : p.trees.front().projects.size();
  fmt::print(out, "fabuild: index: {} wheel{} of {} project{} in {} and {} variant index{}; page {}\n",
             p.catalog.wheels.size(), p.catalog.wheels.size() == 1 ? "" : "s", projects, projects == 1 ? "" : "s",
             in_house("simple/"), p.trees.empty() ? 0 : p.trees.size() - 1, p.trees.size() == 2 ? "" : "es",
             in_house(kPageName));
  for (const auto& w : p.warnings) spdlog::warn("{}", w);
  for (const auto& l : p.catalog.left_out) spdlog::warn("not published: {}", in_house(l));
  for (const auto& r : p.catalog.repaired) spdlog::warn("{}", in_house(r));
}

}  // namespace

ExitCode publish_build(const Plan& plan, const FinishedRun& run, Files& files, std::ostream& out) {
  const fs::path wheelhouse(plan.wheelhouse);
  try {
    if (auto made = files.create_directories(wheelhouse); !made) {
      throw UserError(kExitCellFailed, Location{}, made.error().what, "check that its parent is writable");
    }
    RunRecord record;
    record.started = run.started;
    record.matrix = plan.matrix_as_read();  // with its --set flags: how this run read it
    record.elapsed_s = seconds(run.elapsed);
    record.budget_cores = plan.budget.cores;
    record.budget_memory_gb = plan.budget.memory_gb;
    record.exit_code = run.exit_code;
    if (plan.torch.asked && plan.torch.failed.empty()) {
      record.torch_index = plan.torch.index;
      for (const auto& [platform, releases] : plan.torch.releases) {
        for (const TorchRelease& t : releases)
          record.torch_releases.push_back({t.version.str(), t.cuda.str(), "", true});
      }
    }
    if (!plan.remote_cache.url.empty()) {
      const RemoteCacheReport used = remote_cache_report(*run.cells);
      record.remote = RunRecord::RemoteUse{plan.remote_cache.url,
                                           plan.remote_cache.write,
                                           plan.remote_cache.write_why,
                                           describe_trust(plan.remote_cache.trust),
                                           used.pushed,
                                           used.kept,
                                           used.indexes_refused,
                                           used.dropped};
    }
    const std::map<std::string, FiledWheel> manifest =
        manifest_entries(wheelhouse);  // once, for the records and the page
    const std::map<std::string, FiledCell> filed = filed_cells(manifest);
    for (std::size_t i = 0; i < plan.cells.size() && i < run.cells->size(); ++i) {
      record.cells.push_back(cell_record(plan, plan.cells[i], (*run.cells)[i], wheelhouse, filed, files));
    }
    if (run.preparation != nullptr) {
      for (const auto& o : *run.preparation) {
        CellRecord r = base_record(o, wheelhouse, files);
        if (auto g = run.gb_per_job.find(o.id); g != run.gb_per_job.end()) r.memory_gb = o.max_jobs * g->second;
        record.preparation.push_back(std::move(r));
      }
    }
    PublishOptions options;
    options.manifest = &manifest;
    const Published p = publish_wheelhouse(wheelhouse, std::move(record), options);
    say_published(p, plan.wheelhouse, out);
    return run.exit_code;
  } catch (const UserError& e) {
    spdlog::error("{}{}; the wheels are filed, but the index and page were not made",
                  e.where().str().empty() ? "" : e.where().str() + ": ", e.message());
    if (!e.hint().empty()) spdlog::error("hint: {}; then run: fabuild index {}", e.hint(), plan.wheelhouse);
    return run.exit_code == kExitOk ? kExitCellFailed : run.exit_code;
  }
}

void check_indexable(const IndexOptions& options, const Files& files) {
  const fs::path dir(options.wheelhouse);
  if (!files.is_directory(dir)) return;
  if (options.adopt) return refuse_adopting(dir);
  if (files.exists(dir / kManifestName)) return;
  throw config_error(Location{dir.string()},
                     fmt::format("{} has no {}: it is not a fabuild wheelhouse, and its index pages would be "
                                 "written over",
                                 dir.string(), kManifestName),
                     "give the directory fabuild built into; to index the wheels of another directory, pass --adopt "
                     "(fabuild then writes only its own files and removes nothing it did not write)");
}

ExitCode index_command(const IndexOptions& options, const Files& files, std::ostream& out) {
  PublishOptions po;
  po.adopt = options.adopt;
  po.base_url = options.base_url;
  if (!po.base_url.empty() && po.base_url.find("://") == std::string::npos) {
    throw config_error(Location{}, fmt::format("--base-url {}: expected an absolute URL", po.base_url),
                       "e.g. --base-url https://wheels.example/ or file:///srv/wheelhouse/");
  }
  const bool had_manifest = files.exists(fs::path(options.wheelhouse) / kManifestName);
  const Published p = publish_wheelhouse(options.wheelhouse, std::nullopt, po);
  // Adopted: a fabuild wheelhouse from now on, whose pages the next `fabuild index` may rewrite.
  if (options.adopt && !had_manifest)
    write_file_atomically(fs::path(options.wheelhouse) / kManifestName, "{\"cells\": {}}\n");
  if (!options.quiet) say_published(p, options.wheelhouse, out);
  if (!p.catalog.left_out.empty()) {
    spdlog::error("{} wheel{} could not be published (named above): remove or rebuild {}", p.catalog.left_out.size(),
                  p.catalog.left_out.size() == 1 ? "" : "s", p.catalog.left_out.size() == 1 ? "it" : "them");
    return kExitCellFailed;
  }
  return kExitOk;
}

}  // namespace fabuild
