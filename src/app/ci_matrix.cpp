#include "app/ci_matrix.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/plan.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "util/error.h"
#include "util/text.h"

namespace fabuild {

namespace {

// Seconds a cell may take on a runner: its own limit when the matrix sets one (the engine
// stops it there), else the expected time of its archs.
double cell_seconds(const Cell& cell, const CiSpec& ci) {
  if (cell.build().timeout_s) return *cell.build().timeout_s;
  return ci.per_arch_s * expected_cost(cell);
}

// The job's timeout in whole minutes: setup, then its cells one after another (the most they
// can take, whatever the runner runs at once), at most ci.max_timeout.
int job_timeout(const std::vector<Cell>& cells, const CiSpec& ci, const std::string& job, std::vector<std::string>& warnings) {
  double seconds = ci.setup_s;
  for (const auto& c : cells) seconds += cell_seconds(c, ci);
  const int minutes = static_cast<int>(std::ceil(seconds / 60));
  const int cap = static_cast<int>(std::floor(ci.max_timeout_s / 60));
  if (minutes > cap) {
    warnings.push_back(fmt::format("{}: may need {} minutes, more than ci.max_timeout ({} minutes); its timeout is {} minutes",
                                   job, minutes, cap, cap));
    return cap;
  }
  return minutes;
}

void add_list(std::vector<std::string>& args, const char* flag, const std::vector<std::string>& values) {
  if (values.empty()) return;
  args.push_back(flag);
  args.push_back(join(values, ","));
}

std::vector<std::string> filter_args(const Filters& f) {
  std::vector<std::string> args;
  add_list(args, "--fa", f.version);
  add_list(args, "--torch", f.torch);
  add_list(args, "--cuda", f.cuda);
  add_list(args, "--python", f.python);
  add_list(args, "--platform", f.platform);
  add_list(args, "--only", f.only);
  return args;
}

std::string shell_line(const std::vector<std::string>& args) {
  std::vector<std::string> quoted;
  for (const auto& a : args) quoted.push_back(shell_quote(a));
  return join(quoted, " ");
}

}  // namespace

std::string shell_quote(const std::string& arg) {
  const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::string_view("_-./:,=+@%").find(c) != std::string_view::npos;
  });
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CiMatrix plan_ci_jobs(const std::vector<Cell>& cells, const CiSpec& ci, const Filters& filters) {
  CiMatrix m;
  if (cells.size() <= static_cast<std::size_t>(ci.max_entries)) {
    // One job per cell: --only with its id selects it whatever other filters were given.
    for (const auto& cell : cells) {
      CiJob job;
      job.name = cell.id();
      job.runner = ci.runner;
      job.timeout_minutes = job_timeout({cell}, ci, job.name, m.warnings);
      job.cells = 1;
      job.only = job.name;
      job.artifact = "wheelhouse-" + job.name;
      job.args = {"--only", job.name};
      m.jobs.push_back(std::move(job));
    }
    return m;
  }
  // More cells than jobs: every job runs one shard of the same selection, so each repeats
  // the filters that made it.
  const int n = ci.max_entries;
  const std::vector<std::string> filters_given = filter_args(filters);
  for (int k = 1; k <= n; ++k) {
    const Shard shard{k, n};
    const std::vector<Cell> part = shard_cells(cells, shard);
    CiJob job;
    job.name = fmt::format("shard {}/{} ({} cell{})", k, n, part.size(), part.size() == 1 ? "" : "s");
    job.runner = ci.runner;
    job.timeout_minutes = job_timeout(part, ci, job.name, m.warnings);
    job.cells = part.size();
    job.shard = shard;
    job.artifact = fmt::format("wheelhouse-shard-{}-of-{}", k, n);
    job.args = filters_given;
    job.args.push_back("--shard");
    job.args.push_back(fmt::format("{}/{}", k, n));
    m.jobs.push_back(std::move(job));
  }
  return m;
}

nlohmann::ordered_json github_matrix_json(const CiMatrix& matrix) {
  nlohmann::ordered_json include = nlohmann::ordered_json::array();
  for (const auto& job : matrix.jobs) {
    nlohmann::ordered_json entry;
    entry["name"] = job.name;
    entry["runner"] = job.runner;
    entry["timeout"] = job.timeout_minutes;
    entry["cells"] = job.cells;
    entry["only"] = job.only;
    entry["shard"] = job.shard ? fmt::format("{}/{}", job.shard->index, job.shard->count) : std::string();
    entry["artifact"] = job.artifact;
    entry["args"] = shell_line(job.args);
    include.push_back(std::move(entry));
  }
  return nlohmann::ordered_json{{"include", include}};
}

ExitCode print_ci_matrix(const Options& options, std::ostream& out) {
  if (options.ci_matrix != "github") {
    throw config_error(Location{}, fmt::format("--ci-matrix {}: fabuild writes matrices for github", options.ci_matrix),
                       "use --ci-matrix github; for GitLab and Buildkite, see docs/ci.md (--shard auto)");
  }
  if (options.shard) {
    throw config_error(Location{}, "--ci-matrix lays out every shard itself; it does not take --shard",
                       "drop --shard: each job of the matrix carries its own");
  }
  if (options.dry_run || options.list) {
    throw config_error(Location{}, "--ci-matrix prints a CI matrix; it does not combine with --dry-run or --list",
                       "run them separately");
  }
  const MatrixSpec spec = load_spec(options);
  const Expansion picked = select_cells(expand(spec), options.filters);
  for (const auto& w : picked.warnings) spdlog::warn("{}", w);
  if (picked.cells.empty() && !options.allow_empty) {
    spdlog::error("no cell selected: the filters leave nothing to build");
    return kExitNoCellSelected;
  }
  const CiMatrix matrix = plan_ci_jobs(picked.cells, spec.ci, options.filters);
  for (const auto& w : matrix.warnings) spdlog::warn("{}", w);
  out << github_matrix_json(matrix).dump() << "\n";
  spdlog::info("{} cell{} in {} job{}{} on {}", picked.cells.size(), picked.cells.size() == 1 ? "" : "s",
               matrix.jobs.size(), matrix.jobs.size() == 1 ? "" : "s",
               matrix.jobs.size() < picked.cells.size() ? " (shards balanced by expected cost)" : "", spec.ci.runner);
  return kExitOk;
}

}  // namespace fabuild
