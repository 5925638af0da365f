#include "app/ci_matrix.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/ci_providers.h"
#include "app/plan.h"
#include "app/remote_cache.h"
#include "costs/contention.h"
#include "matrix/axes.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/text.h"

namespace fabuild {

namespace {

// The job's expected time: setup (the longest its rows' records hold, else ci.setup_time), then
// its rows one after another (the most they can take, whatever the runner runs at once). A row's
// later Python tags take its kernels from the job's own object cache: kExtraTagCost of its first
// each. `recorded`: every row was timed from recorded unit costs.
struct JobTime {
  double seconds = 0;
  bool recorded = true;
};
JobTime job_seconds(const std::vector<Cell>& cells, const CiSpec& ci, const CiCosts& costs) {
  std::optional<double> setup;
  double rows = 0;
  bool recorded = true;
  for (const auto& row : rows_of(cells)) {
    std::vector<Cell> mine;
    for (std::size_t i : row) mine.push_back(cells[i]);
    const RowTime t = row_time(mine, ci, costs);
    recorded = recorded && t.recorded;
    setup = std::max(setup.value_or(0), t.setup_s);
    rows += whole_row_seconds(t, mine.size()) - t.setup_s;
  }
  return JobTime{setup.value_or(ci.setup_s) + rows, recorded};
}

// In whole minutes, at most ci.max_timeout (a warning names a job whose expected time is over it)
// and at least kLeastTimeoutMinutes: the expected time, or kRecordedTimeoutMargin times it for a
// row timed from recorded costs.
int job_timeout(double seconds, bool recorded, const CiSpec& ci, const std::string& job,
                std::vector<std::string>& warnings) {
  const int minutes = static_cast<int>(std::ceil(seconds / 60));
  const int cap = static_cast<int>(std::floor(ci.max_timeout_s / 60));
  const int with_margin = static_cast<int>(std::ceil(seconds * (recorded ? kRecordedTimeoutMargin : 1) / 60));
  if (minutes <= cap) return std::min(cap, std::max(kLeastTimeoutMinutes, with_margin));
  warnings.push_back(
      fmt::format("{}: may need {} minutes, more than ci.max_timeout ({} minutes); its timeout is {} minutes", job,
                  minutes, cap, cap));
  return cap;
}

void add_list(std::vector<std::string>& args, const std::string& flag, const std::vector<std::string>& values) {
  if (values.empty()) return;
  args.push_back(flag);
  args.push_back(join(values, ","));
}

std::vector<std::string> filter_args(const Filters& f) {
  std::vector<std::string> args;
  for (const AxisRow& row : axis_rows()) {
    const auto it = f.axes.find(row.axis);
    if (it != f.axes.end() && !row.flag.empty()) add_list(args, std::string(row.flag), it->second);
    if (!row.alt_key.empty()) add_list(args, "--" + std::string(row.alt_key), f.rocm);
  }
  add_list(args, "--only", f.only);
  return args;
}

}  // namespace

std::string runner_for(const CiSpec& ci, Platform platform) {
  const auto it = ci.runners.find(to_string(platform));
  return it != ci.runners.end() ? it->second : ci.runner;
}

namespace {

std::string cache_key_of(const std::vector<Cell>& cells) {
  std::set<std::string> rows;
  for (const auto& c : cells) rows.insert(row_of(c));
  return hex(sha256_of(join(std::vector<std::string>(rows.begin(), rows.end()), "\n"))).substr(0, 16);
}

// "fa2.8.3-torch2.8-cu128-cp310_cp311-linux_x86_64": the first cell's id with every tag of the row.
std::string row_name(const std::vector<Cell>& row) {
  std::string id = row.front().id();
  if (row.size() == 1 || row.front().abi3()) return id;
  std::vector<std::string> tags;
  for (const auto& c : row) tags.push_back(c.python.str());
  const std::string tag = "-" + row.front().python.str() + "-";
  if (const auto at = id.find(tag); at != std::string::npos) id.replace(at, tag.size(), "-" + join(tags, "_") + "-");
  return id;
}

}  // namespace

CiMatrix plan_ci_jobs(const std::vector<Cell>& cells, const CiSpec& ci, const Filters& filters, Rows rows,
                      const CiCosts& costs) {
  CiMatrix m;
  // The units a job holds whole: rows, or single cells.
  std::vector<std::vector<Cell>> units;
  for (const auto& unit : units_of(cells, rows)) {
    units.emplace_back();
    for (std::size_t i : unit) units.back().push_back(cells[i]);
  }
  if (units.size() <= static_cast<std::size_t>(ci.max_entries)) {
    // One job per unit: --only with its ids selects it whatever other filters were given.
    // Each row's time and compile shares first: how many shares is a choice over all rows.
    std::vector<RowPlan> plans;
    for (const auto& unit : units) {
      RowPlan r{row_time(unit, ci, costs), unit.size(), 0};
      r.shares = compile_shares_for(unit, r.time, ci, costs);
      plans.push_back(r);
    }
    if (ci.compile_shares == 0) balance_shares(plans, ci);
    m.graph_seconds = graph_seconds(plans, ci.max_parallel);
    std::vector<CiJob> compile_jobs;
    for (std::size_t u = 0; u < units.size(); ++u) {
      const auto& unit = units[u];
      CiJob job;
      job.name = row_name(unit);
      job.runner = runner_for(ci, unit.front().platform);
      job.cells = unit.size();
      job.rows = 1;
      std::vector<std::string> ids;
      for (const auto& c : unit) ids.push_back(c.id());
      job.only = join(ids, ",");
      job.artifact = "wheelhouse-" + job.name;
      job.args = {"--only", job.only};
      job.cache_key = cache_key_of(unit);
      const RowTime& time = plans[u].time;
      ++m.timed_rows;
      m.recorded_rows += time.recorded ? 1 : 0;
      m.gated_rows += time.gated ? 1 : 0;
      m.borrowed_rows += time.recorded && costs.borrowed.count(remote_row_key(unit.front())) != 0 ? 1 : 0;
      if (time.recorded && time.recorded_busy) {
        ++m.loaded_rows;
        m.least_busy = std::min(m.least_busy, *time.recorded_busy);
        m.most_busy = std::max(m.most_busy, *time.recorded_busy);
      }
      if (time.setup_recorded) {
        ++m.setup_rows;
        m.longest_setup_s = std::max(m.longest_setup_s, time.setup_s);
      }
      job.shares = plans[u].shares;
      double seconds = whole_row_seconds(time, unit.size());
      if (job.shares > 0) {
        seconds = finishing_job_seconds(time, unit.size());
        const std::vector<double> each = share_jobs_seconds(time, job.shares);
        for (int k = 1; k <= job.shares; ++k) {
          const double share_seconds = each[static_cast<std::size_t>(k - 1)];
          CiJob share = job;
          share.stage = "compile";
          share.cells = 1;  // the row's first: its kernels are every tag's
          share.name = fmt::format("{} share {}/{}", job.name, k, job.shares);
          share.finishing = job.name;
          share.artifact = fmt::format("logs-{}-share-{}-of-{}", job.name, k, job.shares);
          share.args.push_back("--compile-share");
          share.args.push_back(fmt::format("{}/{}", k, job.shares));
          share.args.push_back("--share-costs");
          share.args.push_back(share_costs_arg(unit.front(), costs));
          share.timeout_minutes = job_timeout(share_seconds, time.recorded, ci, share.name, m.warnings);
          share.expected_s = share_seconds;
          m.runner_seconds += share_seconds;
          compile_jobs.push_back(std::move(share));
        }
      }
      job.timeout_minutes = job_timeout(seconds, time.recorded, ci, job.name, m.warnings);
      job.expected_s = seconds;
      m.runner_seconds += seconds;
      m.jobs.push_back(std::move(job));
    }
    m.jobs.insert(m.jobs.begin(), std::make_move_iterator(compile_jobs.begin()),
                  std::make_move_iterator(compile_jobs.end()));
    return m;
  }
  // More units than jobs: shards of the same selection, so each job repeats the filters that
  // made it. With runners per platform, each platform is sharded on its own (--platform P
  // --shard K/N), its share of the jobs in proportion to its cost.
  std::map<Platform, std::vector<Cell>> by_platform;
  for (const auto& c : cells) by_platform[c.platform].push_back(c);
  const bool per_platform = !ci.runners.empty() && by_platform.size() > 1;
  std::vector<std::pair<std::optional<Platform>, std::vector<Cell>>> parts;
  if (per_platform) {
    for (auto& [p, part] : by_platform) parts.emplace_back(p, std::move(part));
  } else {
    parts.emplace_back(std::nullopt, cells);
  }
  std::vector<double> cost;
  for (const auto& [p, part] : parts) {
    double c = 0;
    for (const auto& unit : units_of(part, rows)) c += row_cost(part, unit);
    cost.push_back(c);
  }
  // Jobs per part: at least one each, the rest by cost (largest remainders).
  std::vector<int> jobs(parts.size(), 1);
  int left = ci.max_entries - static_cast<int>(parts.size());
  while (left > 0) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < parts.size(); ++k) {
      if (cost[k] / jobs[k] > cost[best] / jobs[best]) best = k;
    }
    ++jobs[best];
    --left;
  }
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const auto& [platform, part] = parts[k];
    const int n = jobs[k];
    std::vector<std::string> filters_given = filter_args(filters);
    if (platform) {
      filters_given.push_back("--platform");
      filters_given.push_back(to_string(*platform));
    }
    if (rows == Rows::kSplit) filters_given.push_back("--split-rows");
    const std::vector<std::vector<std::size_t>> shards = shard_all(part, n, rows);  // assigned once for all n
    for (int i = 1; i <= n; ++i) {
      const Shard shard{i, n};
      std::vector<Cell> mine;
      for (std::size_t c : shards[static_cast<std::size_t>(i - 1)]) mine.push_back(part[c]);
      CiJob job;
      job.name = fmt::format("{}shard {}/{} ({} cell{})", platform ? to_string(*platform) + " " : "", i, n, mine.size(),
                             mine.size() == 1 ? "" : "s");
      job.runner = platform ? runner_for(ci, *platform) : ci.runner;
      if (!platform && !mine.empty()) job.runner = runner_for(ci, mine.front().platform);
      const JobTime time = job_seconds(mine, ci, costs);
      job.timeout_minutes = job_timeout(time.seconds, time.recorded, ci, job.name, m.warnings);
      job.expected_s = time.seconds;
      m.runner_seconds += time.seconds;
      job.cells = mine.size();
      job.rows = rows_of(mine).size();
      job.shard = shard;
      job.artifact = fmt::format("wheelhouse-{}shard-{}-of-{}", platform ? to_string(*platform) + "-" : "", i, n);
      job.args = filters_given;
      job.args.push_back("--shard");
      job.args.push_back(fmt::format("{}/{}", i, n));
      job.cache_key = cache_key_of(mine);
      m.jobs.push_back(std::move(job));
    }
  }
  return m;
}

namespace {

// Which rows are compiled in shares, and where their times came from: measured or guessed.
void say_shares(const CiMatrix& matrix, const CiSpec& ci, const RemoteCacheSettings& remote) {
  std::size_t shared = 0;
  std::size_t compile_jobs = 0;
  for (const auto& j : matrix.jobs) {
    if (j.stage == "compile") ++compile_jobs;
    if (j.stage == "build" && j.shares > 0) ++shared;
  }
  if (matrix.timed_rows > 0) {
    spdlog::info(
        "row times: {} of {} from recorded unit costs{}{}{}{}", matrix.recorded_rows, matrix.timed_rows,
        matrix.gated_rows > 0 ? fmt::format(" ({} compiled as the memory gate would start them on a runner's "
                                            "{:g} GB less the reserve)",
                                            matrix.gated_rows, ci.runner_memory_gb)
                              : "",
        matrix.borrowed_rows > 0
            ? fmt::format("; {} of them not yet built, by the record of the same kernels for another "
                          "torch series",
                          matrix.borrowed_rows)
            : "",
        matrix.loaded_rows > 0 ? "; " + loads_said(matrix.loaded_rows, matrix.least_busy, matrix.most_busy) : "",
        matrix.recorded_rows < matrix.timed_rows
            ? fmt::format("; the others guessed from ci.time_per_arch ({:g} min an arch)", ci.per_arch_s / 60)
            : "");
  }
  if (matrix.timed_rows > 0) {
    spdlog::info("job setup: {}",
                 matrix.setup_rows == 0
                     ? fmt::format("ci.setup_time ({:g} min), no row's jobs recorded theirs", ci.setup_s / 60)
                     : fmt::format("recorded by the jobs of {} of {} rows (the longest of each row's "
                                   "latest, at most {:.1f} min){}",
                                   matrix.setup_rows, matrix.timed_rows, matrix.longest_setup_s / 60,
                                   matrix.setup_rows < matrix.timed_rows
                                       ? fmt::format("; ci.setup_time ({:g} min) for the others", ci.setup_s / 60)
                                       : ""));
  }
  if (shared > 0) {
    spdlog::info(
        "{} row{} compiled in {} share jobs (stage \"compile\"), then one finishing job each that needs "
        "them (docs/ci.md, \"Compile shares\"); all done in {:.1f} h on {} runners at once (ci.max_parallel)",
        shared, shared == 1 ? "" : "s", compile_jobs, matrix.graph_seconds / 3600, ci.max_parallel);
  } else if (!remote.url.empty() && !remote.write) {
    spdlog::info("no compile shares: the remote cache is {}; each row is planned whole in one job", remote.write_why);
  } else if (remote.url.empty() && !matrix.warnings.empty()) {
    spdlog::info(
        "rows over ci.max_timeout could be compiled in shares over several jobs: set a remote cache "
        "(FABUILD_CACHE_REMOTE, or cache.remote in the matrix) that the jobs share");
  }
}

}  // namespace

ExitCode print_ci_matrix(const Options& options, std::ostream& out, const System& system,
                         const std::function<CiCosts(const std::vector<Cell>&, const RemoteCacheSettings&,
                                                     const std::vector<Version>&)>& costs_of) {
  const CiProvider* provider = find_ci_provider(options.ci_matrix);
  if (provider == nullptr) {
    throw config_error(
        Location{}, fmt::format("--ci-matrix {}: fabuild lays out jobs for {}", options.ci_matrix, ci_provider_names()),
        "name one of them (docs/ci.md); for another system, --shard auto reads its parallel-job "
        "variables");
  }
  if (options.shard) {
    throw config_error(Location{}, "--ci-matrix lays out every shard itself; it does not take --shard",
                       "drop --shard: each job of the matrix carries its own");
  }
  if (options.dry_run || options.list) {
    throw config_error(Location{}, "--ci-matrix prints a CI matrix; it does not combine with --dry-run or --list",
                       "run them separately");
  }
  // The jobs are the build's own plan laid out: the same ranges resolved, the same stable-ABI cells.
  const Plan plan = make_plan(options, system);
  const CiSpec& ci = plan.ci;
  std::vector<Cell> cells;
  for (const PlannedCell& p : plan.cells) cells.push_back(p.cell);
  for (const auto& w : plan.warnings) spdlog::warn("{}", w);
  if (cells.empty() && !options.allow_empty) {
    spdlog::error("no cell selected: the filters leave nothing to build");
    return kExitNoCellSelected;
  }
  const bool remote = !plan.remote_cache.url.empty();
  // The plan read the rows' records for the gate already: the same cells, not asked again.
  CiCosts costs = plan.recorded ? *plan.recorded
                  : costs_of    ? costs_of(cells, plan.remote_cache, plan.torch_series)
                                : CiCosts{};
  // A compile share exists to send its objects to the remote, and a run that may not write it
  // refuses one (exit 2): a read-only plan (a pull request's) builds each row whole in one job.
  costs.remote = remote && plan.remote_cache.write;
  CiMatrix matrix = plan_ci_jobs(cells, ci, options.filters, options.rows(), costs);
  matrix.remote = remote;
  add_torch_checks(matrix, plan);
  // Every job builds the matrix as this run reads it: the --set flags go first in its args.
  for (auto& job : matrix.jobs) {
    std::vector<std::string> args;
    for (const auto& set : options.sets) args.insert(args.end(), {"--set", set.text});
    job.args.insert(job.args.begin(), args.begin(), args.end());
  }
  // A matrix at the default time_per_arch may warn for every job: two, then the count.
  constexpr std::size_t kShown = 2;
  for (std::size_t i = 0; i < matrix.warnings.size() && i < kShown; ++i) spdlog::warn("{}", matrix.warnings[i]);
  if (matrix.warnings.size() > kShown) {
    spdlog::warn(
        "...and {} more jobs cut to ci.max_timeout; if your runners are faster than ci.time_per_arch "
        "({:g} min an arch) says, set it (docs/ci.md)",
        matrix.warnings.size() - kShown, ci.per_arch_s / 60);
  }
  out << provider->jobs(matrix, CiCommand{options.matrix}).dump() << "\n";
  say_shares(matrix, ci, plan.remote_cache);
  std::set<std::string> runners;
  for (const auto& j : matrix.jobs) runners.insert(j.runner);
  // The other layout's runner time, for the trade-off: whole rows use fewer runner-hours,
  // split rows finish sooner.
  const CiMatrix other =
      plan_ci_jobs(cells, ci, options.filters, options.split_rows ? Rows::kKeep : Rows::kSplit, costs);
  spdlog::info("expected runner time {:.1f} h ({} jobs, compile shares included); {} {:.1f} h ({} jobs)",
               matrix.runner_seconds / 3600, matrix.jobs.size(),
               options.split_rows ? "keeping rows whole:" : "with --split-rows:", other.runner_seconds / 3600,
               other.jobs.size());
  const auto filing = static_cast<std::size_t>(
      std::count_if(matrix.jobs.begin(), matrix.jobs.end(), [](const CiJob& j) { return j.stage == "build"; }));
  const auto checks = static_cast<std::size_t>(
      std::count_if(matrix.jobs.begin(), matrix.jobs.end(), [](const CiJob& j) { return j.stage == "verify"; }));
  if (checks > 0) {
    spdlog::info("{} torch check{} of stable-ABI wheels (stage \"verify\": no compile, no toolkit)", checks,
                 checks == 1 ? "" : "s");
  }
  if (matrix.jobs.empty() && !cells.empty()) {
    spdlog::info("nothing to run: every selected cell's wheel is filed and proven under each torch it stands for");
    return kExitOk;
  }
  spdlog::info(
      "{} cell{} in {} job{}{}{} on {}", cells.size(), cells.size() == 1 ? "" : "s", filing, filing == 1 ? "" : "s",
      options.split_rows ? "" : " (a row's Python tags in one job, compiled once)",
      filing < (options.split_rows ? cells.size() : rows_of(cells).size()) ? " (shards balanced by expected cost)" : "",
      join(std::vector<std::string>(runners.begin(), runners.end()), ", "));
  return kExitOk;
}

}  // namespace fabuild
