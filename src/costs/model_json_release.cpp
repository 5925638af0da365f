// The release's ops of `fabuild model` (costs/model_json.h): a plan of rows from a row's record,
// its job graph and when the graph ends on N runners ("plan"), and a job graph replayed ("graph").

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "costs/ci_estimate.h"
#include "costs/model_json_parts.h"
#include "costs/row_costs.h"
#include "matrix/spec.h"

namespace fabuild::model_json {

namespace {

Expected<RunnerShape> runner_shape(const json& r) {
  const auto runner = r.find("runner");
  if (runner == r.end() || !runner->is_object()) return fail("\"runner\" takes an object {cores, memory_gb, ...}");
  const auto cores = number(*runner, "cores");
  const auto memory = number(*runner, "memory_gb");
  const auto threads = count(*runner, "nvcc_threads", 1.0);
  if (!cores || !memory || !threads) {
    return tl::make_unexpected(!cores ? cores.error() : !memory ? memory.error() : threads.error());
  }
  RunnerShape shape{std::max(1.0, *cores), *memory, *threads, std::nullopt};
  if (const auto g = runner->find("gate"); g != runner->end() && !g->is_null()) {
    if (!g->is_object()) return fail("\"gate\" takes an object {cores, memory_gb, nvcc_threads}");
    const auto gate_cores = number(*g, "cores", shape.cores);
    const auto gate_memory = number(*g, "memory_gb");
    const auto gate_threads = count(*g, "nvcc_threads", 1.0);
    if (!gate_cores || !gate_memory || !gate_threads) {
      return tl::make_unexpected(!gate_cores    ? gate_cores.error()
                                 : !gate_memory ? gate_memory.error()
                                                : gate_threads.error());
    }
    shape.gate = GateGrant{std::max(1.0, *gate_cores), *gate_memory, *gate_threads};
  }
  return shape;
}

json row_json(const std::string& name, const RowPlan& p) {
  json row{{"name", name},
           {"tags", p.tags},
           {"shares", p.shares},
           {"kernel_s", p.time.kernel_s},
           {"tag_s", p.time.tag_s},
           {"first_s", p.time.first_s},
           {"setup_s", p.time.setup_s},
           {"gated", p.time.gated},
           {"whole_s", whole_row_seconds(p.time, p.tags)}};
  if (p.shares > 0) {
    row["share_s"] = share_jobs_seconds(p.time, p.shares);
    row["finishing_s"] = finishing_job_seconds(p.time, p.tags);
  }
  return row;
}

// The plan's job graph as the nightly runs it: every compile job first (rows in plan order), then
// each row's finishing job, which needs the whole compile stage, or the row built whole.
json job_graph(const std::vector<std::string>& names, const std::vector<RowPlan>& rows) {
  json jobs = json::array();
  std::vector<std::string> stage;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].shares <= 0) continue;
    const std::vector<double> each = share_jobs_seconds(rows[i].time, rows[i].shares);
    for (std::size_t k = 0; k < each.size(); ++k) {
      stage.push_back(fmt::format("{} share {}/{}", names[i], k + 1, rows[i].shares));
      jobs.push_back({{"name", stage.back()}, {"seconds", each[k]}, {"stage", "compile"}, {"needs", json::array()}});
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool split = rows[i].shares > 0;
    jobs.push_back({{"name", split ? names[i] + " finish" : names[i]},
                    {"seconds", split ? finishing_job_seconds(rows[i].time, rows[i].tags)
                                      : whole_row_seconds(rows[i].time, rows[i].tags)},
                    {"stage", "build"},
                    {"needs", split ? json(stage) : json::array()}});
  }
  return jobs;
}

}  // namespace

Expected<json> plan(const json& r) {
  const auto record_json = r.find("record");
  if (record_json == r.end() || !record_json->is_object()) return fail("\"record\" takes a row's record (an object)");
  const std::optional<RowCosts> record = row_costs_from_json(record_json->dump());
  if (!record) return fail("\"record\" is not a row's record: {\"units\": {UNIT: {cpu_s, peak_mb, ...}}, ...}");
  const auto shape = runner_shape(r);
  if (!shape) return tl::make_unexpected(shape.error());
  const auto setup = number(r, "setup_s", 30 * 60.0);
  const auto cap = number(r, "max_timeout_s", 6 * 3600.0);
  const auto parallel = count(r, "max_parallel", 20.0);
  const auto entries = count(r, "max_entries", 256.0);
  if (!setup || !cap || !parallel || !entries) {
    return tl::make_unexpected(!setup      ? setup.error()
                               : !cap      ? cap.error()
                               : !parallel ? parallel.error()
                                           : entries.error());
  }
  std::optional<RowTime> time = recorded_row_time(*record, *shape);
  if (!time) return fail("\"record\" has no kernel unit (.cu) with a cost");
  time->setup_s = *setup;

  const auto rows_json = r.find("rows");
  if (rows_json == r.end() || !rows_json->is_array() || rows_json->empty()) {
    return fail("\"rows\" takes an array of {name, tags}");
  }
  const auto given = r.find("shares");
  if (given != r.end() && !given->is_object()) return fail("\"shares\" takes an object {row: count}");
  std::vector<std::string> names;
  std::vector<RowPlan> rows;
  for (const auto& row : *rows_json) {
    if (!row.is_object() || !row.contains("name") || !row["name"].is_string()) {
      return fail(fmt::format("\"rows\": {} is not {{name, tags}}", row.dump()));
    }
    const auto tags = count(row, "tags", 1.0);
    if (!tags) return tl::make_unexpected(tags.error());
    names.push_back(row["name"].get<std::string>());
    RowPlan p{*time, static_cast<std::size_t>(*tags), 0};
    if (given == r.end()) {
      p.shares = shares_to_fit(p.time, p.tags, *cap);
    } else if (const auto k = given->find(names.back()); k != given->end()) {
      if (!k->is_number_integer() || k->get<int>() < 0)
        return fail(fmt::format("shares of {}: {}", names.back(), k->dump()));
      p.shares = k->get<int>() > 1 ? k->get<int>() : 0;
    }
    rows.push_back(p);
  }
  if (const auto b = r.find("balance"); b != r.end() && !b->is_boolean())
    return fail("\"balance\" takes true or false");
  if (r.contains("balance") && r["balance"].get<bool>()) {
    CiSpec ci;
    ci.max_parallel = *parallel;
    ci.max_entries = *entries;
    ci.max_timeout_s = *cap;
    balance_shares(rows, ci);
  }
  json out{{"rows", json::array()}, {"jobs", job_graph(names, rows)}, {"runner_s", runner_seconds(rows)}};
  for (std::size_t i = 0; i < rows.size(); ++i) out["rows"].push_back(row_json(names[i], rows[i]));
  std::vector<int> runners{*parallel};
  if (const auto it = r.find("runners"); it != r.end()) {
    if (!it->is_array()) return fail("\"runners\" takes an array of runner counts");
    runners.clear();
    for (const auto& n : *it) {
      if (!n.is_number_integer() || n.get<int>() < 1)
        return fail(fmt::format("\"runners\": {} is not a count", n.dump()));
      runners.push_back(n.get<int>());
    }
  }
  out["graph_s"] = json::object();
  for (int n : runners) out["graph_s"][std::to_string(n)] = graph_seconds(rows, n);
  return out;
}

// A job graph replayed: the jobs of a plan's answer ("jobs") or of `--ci-matrix github`
// ("include", its expected_s), in stages as the nightly runs them: the compile jobs and the rows
// built whole; the finishing jobs (a build job that needs others or has shares); the verify jobs.
Expected<json> graph(const json& r) {
  const auto jobs = r.contains("jobs") ? r.find("jobs") : r.find("include");
  if (jobs == r.end() || !jobs->is_array()) return fail("\"jobs\" (or \"include\") takes an array of jobs");
  std::vector<std::vector<double>> stages(3);
  double runner_s = 0;
  for (const auto& job : *jobs) {
    if (!job.is_object()) return fail(fmt::format("a job is an object, not {}", job.dump()));
    const auto seconds = number(job, job.contains("seconds") ? "seconds" : "expected_s");
    if (!seconds) {
      const auto name = job.find("name");
      return fail(fmt::format("job {}: {}", name != job.end() ? name->dump() : std::to_string(stages[0].size()),
                              seconds.error().what));
    }
    const auto stage = job.find("stage");
    const std::string name = stage != job.end() && stage->is_string() ? stage->get<std::string>() : "build";
    const auto needs = job.find("needs");
    const auto shares = job.find("shares");
    const bool finishing =
        name == "build" && ((needs != job.end() && needs->is_array() && !needs->empty()) ||
                            (shares != job.end() && shares->is_number() && shares->get<double>() > 0));
    stages[name == "verify" ? 2 : finishing ? 1 : 0].push_back(*seconds);
    runner_s += *seconds;
  }
  json out{{"runner_s", runner_s}, {"stages", {stages[0].size(), stages[1].size(), stages[2].size()}}};
  out["graph_s"] = json::object();
  const auto runners = r.find("runners");
  if (runners == r.end() || !runners->is_array() || runners->empty())
    return fail("\"runners\" takes an array of runner counts");
  for (const auto& n : *runners) {
    if (!n.is_number_integer() || n.get<int>() < 1)
      return fail(fmt::format("\"runners\": {} is not a count", n.dump()));
    out["graph_s"][std::to_string(n.get<int>())] = stages_seconds(stages, n.get<int>());
  }
  return out;
}

}  // namespace fabuild::model_json
