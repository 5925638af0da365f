#include "app/compile_steps.h"

#include <chrono>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "app/object_cache.h"
#include "app/remote_cache.h"
#include "costs/row_costs.h"
#include "costs/unit_peaks.h"
#include "engine/facts.h"
#include "publish/run_record.h"
#include "util/host_info.h"

namespace fabuild {

namespace fs = std::filesystem;

namespace {

// A line in the cell's log, through the System's files.
void say(const CompileUnits& u, const std::string& log_path, const std::string& line) {
  u.files->append(log_path, line);
}

}  // namespace

BuildUnits build_units(const CompileUnits& u) {
  BuildUnits units;
  if (!u.sources_file.empty()) {
    const Expected<std::string> text = u.files->read(u.sources_file);
    const auto json = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
    const auto sources = json.is_object() ? json.find("sources") : json.end();
    if (sources != json.end() && sources->is_array() && !sources->empty()) {
      for (const auto& source : *sources) {
        if (!source.is_string()) continue;
        const std::string unit =
            fs::path(source.get<std::string>()).lexically_relative(u.tree).lexically_normal().string();
        if (unit.empty() || unit.starts_with("..")) continue;  // outside the tree: not the cell's to count
        (kernel_unit(unit) ? units.kernels : units.others).push_back(unit);
      }
      std::sort(units.kernels.begin(), units.kernels.end());
      return units;
    }
    if (!text) {
      units.from_tree = "the sources step left no list: " + text.error().what;
    } else if (json.is_object() && json.contains("error") && json["error"].is_string()) {
      units.from_tree = "setup.py could not be read for its sources: " + json["error"].get<std::string>();
    } else {
      units.from_tree = "setup.py named no extension sources";
    }
  }
  const fs::path below = u.build_dir.lexically_relative(u.tree);
  for (const auto& unit : kernel_units(*u.files, u.build_dir))
    units.kernels.push_back((below / unit).lexically_normal().string());
  return units;
}

namespace {

// The row's record: this machine's, completed by the remote's (which other runners wrote).
RowCosts known_costs(const CompileUnits& u, const std::string& log) {
  // A share of a planned release: the record the plan saw, whatever was recorded since.
  if (u.share && !u.share_costs.empty()) {
    if (u.share_costs == "none") return {};
    const auto text = u.remote ? fetch_costs_by_digest(*u.remote, u.share_costs) : std::nullopt;
    const auto costs = text ? row_costs_from_json(*text) : std::nullopt;
    if (!costs) {
      say(u, log,
          fmt::format("fabuild: unit costs: the record {} the plan named is not on the remote: costs guessed\n",
                      u.share_costs));
    }
    return costs.value_or(RowCosts{});
  }
  RowCosts costs = read_row_costs(*u.files, u.costs).value_or(RowCosts{});
  if (u.remote) {
    if (const auto text = fetch_row_costs(*u.remote, u.row_key)) {
      if (const auto theirs = row_costs_from_json(*text)) {
        const CostsAdded added = add_theirs(costs, *theirs);
        if (added.units + added.setups > 0) save_row_costs(*u.files, u.costs, costs);
        if (added.units > 0) {
          say(u, log, fmt::format("fabuild: unit costs: {} taken from the remote's record of the row\n", added.units));
        }
      }
    }
  }
  if (costs.kernel_cpu_s() <= 0 && u.borrowed) {
    say(u, log,
        fmt::format("fabuild: unit costs: none recorded for this row yet: its kernels planned by torch {}'s record "
                    "of the same kernels ({} units)\n",
                    u.borrowed_from, u.borrowed->units.size()));
    return *u.borrowed;
  }
  return costs;
}

}  // namespace

std::shared_ptr<CompileFollower> follow_compiles(CellRun& run, const CompileUnits& u) {
  auto follower = std::make_shared<CompileFollower>(FollowSettings{u.compiles, u.remote_write ? u.remote : nullptr,
                                                                   u.cache_dir, u.row_key, u.writer,
                                                                   std::chrono::milliseconds(2000), u.trust, u.clock});
  run.progress = [follower](int slots) { return follower->progress(slots); };
  return follower;
}

Step units_step(const CompileUnits& u, std::shared_ptr<CompileFollower> follower) {
  return Step{
      "units", {}, {}, {}, [u, follower](StepContext& ctx) -> StepResult {
        const std::string& log = ctx.cell.log_path;
        const RowCosts costs = known_costs(u, log);
        const BuildUnits build = build_units(u);
        const std::vector<std::string>& units = build.kernels;
        const int count = u.share ? u.share->count : 1;
        const ShareSplitPlan plan = split_units(units, &costs, count, u.backward_off);
        const int mine = u.share ? u.share->index : 1;
        std::map<std::string, double> expected;
        double total = 0;
        for (const auto& load : plan.load) total += load;
        for (const auto& unit : units) {
          if (plan.share_of.at(unit) != mine) continue;
          expected[(u.tree / unit).lexically_normal().string()] = plan.cost.at(unit);
        }
        if (!u.share) {  // the API's files count too where the cell compiles them itself, at a kernel's mean cost
          const double mean = units.empty() ? 1.0 : total / static_cast<double>(units.size());
          for (const auto& unit : build.others) {
            const auto recorded = costs.units.find(unit);
            expected[(u.tree / unit).lexically_normal().string()] =
                recorded != costs.units.end() ? recorded->second.cpu_s : mean;
          }
        }
        if (!build.from_tree.empty()) {
          say(u, log, fmt::format("fabuild: units: counted from the source tree's .cu files ({})\n", build.from_tree));
        }
        const std::string basis = plan.measured ? fmt::format("costs recorded {} for {} of {} units", costs.recorded,
                                                              plan.recorded_units, units.size())
                                                : "no recorded costs: " + guessed_costs_said(u.backward_off);
        if (u.share) {
          const Expected<void> written =
              u.files->write(u.share_file, objcache::write_share_file(share_split_for(plan, u.tree, mine, count)));
          if (!written) return fail("cannot write the share's split: " + written.error().what);
          if (u.remote && u.remote_write) {
            if (const auto marked = mark_shares(*u.remote, u.row_key, count); !marked) {
              say(u, log, fmt::format("fabuild: remote cache: note: {}\n", marked.error().what));
            }
          }
          say(u, log,
              fmt::format("fabuild: compile share {}/{}: {} of the {} kernel units ({:.0f}% of their cost; {}); "
                          "the others get placeholder objects\n",
                          mine, count, expected.size(), units.size(),
                          total > 0 ? 100 * plan.load[static_cast<std::size_t>(mine - 1)] / total : 0, basis));
        } else {
          say(u, log,
              fmt::format("fabuild: {} units the build compiles: {} kernel units and {} other{} ({})\n",
                          expected.size(), units.size(), build.others.size(), build.others.size() == 1 ? "" : "s",
                          basis));
        }
        if (!u.peaks_file.empty()) {
          // A row record that went away since the plan leaves no file: each compile runs alone.
          if (const auto peaks = kernel_peaks(costs, u.nvcc_threads)) {
            const Expected<void> written =
                u.files->write(u.peaks_file, objcache::write_unit_peaks(unit_peaks_for(costs, u.tree, u.nvcc_threads)));
            if (!written) return fail("cannot write the memory gate's unit peaks: " + written.error().what);
            say(u, log,
                fmt::format("fabuild: memory gate: {} kernels' recorded peaks, {:.1f}-{:.1f} GB; each compile starts "
                            "when its own fits beside the running ones'\n",
                            peaks->count, peaks->smallest_mb / 1024, peaks->largest_mb / 1024));
          }
        }
        if (u.job_setups) u.job_setups->compile_starts(u.row_key);
        follower->start(std::move(expected));
        return {};
      }};
}

namespace {

// A share job's own record, beside the row's: what it measured, kept out of the split.
fs::path share_costs_path(const CompileUnits& u, int share) {
  return fs::path(u.costs).replace_extension(fmt::format(".share{}.json", share));
}

// What the row's compile shares measured, from this machine and the remote, into `costs`
// (their local files then go: they are in the row's record). Returns how many units it added.
std::size_t take_share_costs(const CompileUnits& u, RowCosts& costs) {
  std::size_t added = 0;
  const auto take = [&](const RowCosts& theirs) {
    for (const auto& [unit, cost] : theirs.units) added += costs.units.insert_or_assign(unit, cost).second ? 1 : 0;
    for (const SetupTime& setup : theirs.setups) costs.add_setup(setup);
    if (costs.built.empty()) costs.built = theirs.built;
  };
  const int remote_shares = u.remote ? recorded_shares(*u.remote, u.row_key) : 0;
  for (int k = 1; k <= remote_shares; ++k) {
    if (const auto text = fetch_row_costs(*u.remote, u.row_key, k)) {
      if (const auto theirs = row_costs_from_json(*text)) take(*theirs);
    }
  }
  for (const fs::path& entry : u.files->list(u.costs.parent_path()).value_or(std::vector<fs::path>())) {
    const std::string name = entry.filename().string();
    if (!name.starts_with(u.costs.stem().string() + ".share")) continue;
    if (const auto theirs = read_row_costs(*u.files, entry)) take(*theirs);
    u.files->remove(entry);
  }
  return added;
}

}  // namespace

Step costs_step(const CompileUnits& u, std::shared_ptr<CompileFollower> follower) {
  return Step{
      "costs", {}, {}, {}, [u, follower](StepContext& ctx) -> StepResult {
        follower->stop();
        const std::string& log = ctx.cell.log_path;
        for (const auto& note : follower->notes()) say(u, log, fmt::format("fabuild: remote cache: note: {}\n", note));
        if (u.remote) {
          say(u, log, fmt::format("fabuild: remote cache: {} files sent while compiling\n", follower->pushed()));
          ctx.facts[kFactRemoteFollow] =
              nlohmann::json{{"objects", follower->pushed()}, {"bytes", follower->pushed_bytes()}}.dump();
        }
        const int share = u.share ? u.share->index : 0;
        const fs::path path = share > 0 ? share_costs_path(u, share) : u.costs;
        RowCosts costs = read_row_costs(*u.files, path).value_or(RowCosts{});
        const std::size_t from_shares = share > 0 ? 0 : take_share_costs(u, costs);
        const std::string when = fmt::format("{} on {}", utc_now_iso8601(), host_name());
        const std::size_t added = record_compiles(costs, u.compiles->after_build().costs, u.tree, when, u.nvcc_threads);
        // The kernels the build compiles, from its own list (not a tree's count): a plan splits and
        // times them all, those without a cost yet too.
        if (const BuildUnits build = build_units(u); build.from_tree.empty() && !build.kernels.empty()) {
          costs.built = build.kernels;
        }
        const auto setup = u.job_setups ? u.job_setups->take(u.row_key) : std::nullopt;
        if (setup) ctx.facts[kFactJobSetup] = fmt::format("{:.1f}", *setup);
        // Named by its job too: two shares on one host may record in the same second.
        const std::string job = share > 0 ? fmt::format("{} (share {})", when, share) : when;
        if (setup && costs.add_setup(SetupTime{*setup, job})) {
          say(u, log,
              fmt::format("fabuild: job setup: {:.1f} min from the job's start to its first compile, "
                          "recorded for the next plan's job times\n",
                          *setup / 60));
        } else if (added + from_shares == 0) {
          return {};
        }
        if (costs.recorded.empty()) costs.recorded = when;
        save_row_costs(*u.files, path, costs);
        if (added + from_shares > 0) {
          say(u, log,
              fmt::format("fabuild: unit costs: {} compiles recorded{} ({})\n", added,
                          share > 0 ? fmt::format(" for share {} (added to the row's record by its next build)", share)
                          : from_shares > 0 ? fmt::format(", {} from the row's compile shares", from_shares)
                                            : "",
                          path.string()));
        }
        if (u.remote && u.remote_write) {
          if (const auto sent = push_row_costs(*u.remote, u.row_key, to_json(costs).dump(), share); !sent) {
            say(u, log, fmt::format("fabuild: remote cache: note: the row's costs not sent: {}\n", sent.error().what));
          }
        }
        return {};
      }};
}

Step share_step(const CompileUnits& u, std::shared_ptr<CompileFollower> follower) {
  return Step{
      "share", {}, {}, {}, [u, follower](StepContext& ctx) -> StepResult {
        const CacheTally& tally = u.compiles->after_build();
        log_cache_tally(*u.files, tally, ctx.cell.log_path);
        const std::uint64_t units = follower->expected_units();
        const std::uint64_t unstored = tally.errors + tally.uncacheable;
        nlohmann::json j{{"share", fmt::format("{}/{}", u.share->index, u.share->count)},
                         {"units", units},
                         {"compiled", tally.misses},
                         {"hits", tally.hits},
                         {"placeholders", tally.placeholders},
                         {"not_stored", unstored},
                         {"sent_while_compiling", follower->pushed()}};
        ctx.facts[kFactShare] = j.dump();
        const std::string& log = ctx.cell.log_path;
        say(u, log,
            fmt::format("fabuild: compile share {}: {} compiled, {} from the cache, {} placeholders for other "
                        "shares and the finishing job; no wheel is filed (the row's finishing job files them)\n",
                        j["share"].get<std::string>(), tally.misses, tally.hits, tally.placeholders));
        // A share exists to put its units on the remote: one that could not is a failed
        // job (the finishing job still compiles what is missing, slower).
        if (unstored > 0) {
          return fail(
              fmt::format("{} of its compiles could not be stored in the object cache (uncacheable or a cache error: "
                          "see the log); the finishing job compiles them",
                          unstored));
        }
        const auto pushed = nlohmann::json::parse(fact(ctx.facts, kFactRemotePush).value_or("{}"), nullptr, false);
        const auto notes = follower->notes();
        const bool push_failed = pushed.is_object() && pushed.value("notes", 0) > 0;
        if (tally.misses > 0 && push_failed) {
          return fail(
              fmt::format("its objects did not all reach the remote cache{} (see the log's remote cache notes); the "
                          "finishing job compiles what is missing",
                          notes.empty() ? "" : ": " + notes.front()));
        }
        return {};
      }};
}

void print_compile_shares(const std::vector<CellOutcome>& outcomes, std::ostream& out) {
  for (const CellOutcome& o : outcomes) {
    const auto text = fact(o.facts, kFactShare);
    if (!text) continue;
    const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object()) continue;
    fmt::print(out,
               "compile share {} of {}: {} compiled (its share: {} kernel units), {} from the cache, {} left to other "
               "shares; {} files sent to the remote while compiling; no wheel filed (the row's finishing job files "
               "them)\n",
               j.value("share", "?"), o.id, j.value("compiled", 0), j.value("units", 0), j.value("hits", 0),
               j.value("placeholders", 0), j.value("sent_while_compiling", 0));
  }
}

}  // namespace fabuild
