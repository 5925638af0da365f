#include "app/probation_steps.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "objcache/probation.h"
#include "objcache/store.h"

namespace fabuild {

namespace {

using json = nlohmann::json;

// The cache paths of the objects the build used (hits and stored misses).
std::set<std::string> used_paths(const objcache::Store& store, const objcache::Probation& probation,
                                 const CacheTally& tally) {
  std::set<std::string> used;
  for (const auto& [manifest, result] : tally.objects) {
    used.insert(probation.path_of(store.manifest_path(manifest)));
    used.insert(probation.path_of(store.result_path(result)));
  }
  return used;
}

// How the cell's second time went: the step that failed then is named where it is not the one
// that sent it back (an import that ran before the rebuild made its module).
std::string second_time(const CellOutcome& o, const std::string& first, bool again) {
  if (!again) return "not built again";
  if (o.result == CellResult::kOk) return "ok the second time";
  if (o.step.empty() || o.step == first) return "failed again";
  return fmt::format("built again, then {} failed", o.step);
}

}  // namespace

Step proven_step(ProbationScope scope) {
  return Step{
      "cache-proven", {}, {}, {}, [scope](StepContext& ctx) -> StepResult {
        const objcache::Store store(scope.cache_dir);
        const objcache::Probation probation(store, scope.row_key);
        const std::size_t before = probation.paths().size();
        if (before == 0) return {};
        const Expected<std::size_t> left = probation.prove(used_paths(store, probation, scope.compiles->after_build()));
        if (!left) {  // they stay on probation: a later build proves them
          scope.files->append(ctx.cell.log_path, fmt::format("fabuild: remote cache: note: {}\n", left.error().what));
          return {};
        }
        scope.files->append(ctx.cell.log_path,
                            fmt::format("fabuild: remote cache: {} of the row's {} files taken from the "
                                        "remote are proven by this build ({} still on probation)\n",
                                        before - *left, before, *left));
        return {};
      }};
}

std::function<std::string(const std::string&, const std::string&, Facts&)> probation_retry(
    ProbationScope scope, std::set<std::string> steps, std::vector<std::filesystem::path> build_outputs) {
  return
      [scope, steps, build_outputs](const std::string& step, const std::string& message, Facts& facts) -> std::string {
        if (!steps.contains(step)) return "";
        const objcache::Store store(scope.cache_dir);
        Expected<std::vector<std::string>> taken_out = objcache::Probation(store, scope.row_key).evict();
        if (!taken_out) {
          scope.files->append(scope.log_path, fmt::format("fabuild: remote cache: note: {}\n", taken_out.error().what));
          return "";
        }
        const std::vector<std::string> evicted = std::move(*taken_out);
        if (evicted.empty()) return "";
        const auto record = [&](bool again) {
          facts[kFactRemoteRetry] = json{{"step", step}, {"evicted", evicted.size()}, {"again", again}}.dump();
        };
        scope.files->append(scope.log_path,
                            fmt::format("fabuild: {} failed ({}) with {} file{} of its row taken from the remote cache "
                                        "that no build has proven: evicted from the local cache\n",
                                        step, message, evicted.size(), evicted.size() == 1 ? "" : "s"));
        for (const std::filesystem::path& p : build_outputs) {
          if (const auto removed = scope.files->remove_all(p); !removed) {
            scope.files->append(scope.log_path, fmt::format("fabuild: cannot remove {} to build again: {}\n",
                                                            p.string(), removed.error().what));
            record(false);
            return "";
          }
        }
        if (scope.compiles) scope.compiles->restart();
        scope.files->append(scope.log_path, "fabuild: building again without them (compiled here)\n");
        record(true);
        return "build";
      };
}

void add_probation(CellRun& run, const ProbationScope& scope, std::vector<std::filesystem::path> build_outputs) {
  std::set<std::string> steps;
  bool from_build = false;
  for (const Step& step : run.steps) {
    from_build = from_build || step.name == "build";
    const bool bookkeeping = step.name == "costs" || step.name.starts_with("cache-");
    if (from_build && !bookkeeping) steps.insert(step.name);
  }
  run.steps.push_back(proven_step(scope));
  run.retry = probation_retry(scope, std::move(steps), std::move(build_outputs));
}

void print_probation_retries(const std::vector<CellOutcome>& outcomes, std::ostream& out) {
  std::vector<std::string> cells;
  std::uint64_t evicted = 0;
  for (const CellOutcome& o : outcomes) {
    const auto text = fact(o.facts, kFactRemoteRetry);
    if (!text) continue;
    const json j = json::parse(*text, nullptr, false);
    if (!j.is_object()) continue;
    evicted += j.value("evicted", std::uint64_t{0});
    cells.push_back(fmt::format("{} ({}: {})", o.id, j.value("step", ""),
                                second_time(o, j.value("step", ""), j.value("again", false))));
  }
  if (cells.empty()) return;
  fmt::print(out,
             "object cache: {} cell{} failed with objects taken from the remote that no build had proven; {} file{} "
             "evicted from the local cache and built here: {}\n",
             cells.size(), cells.size() == 1 ? "" : "s", evicted, evicted == 1 ? "" : "s", fmt::join(cells, ", "));
}

}  // namespace fabuild
