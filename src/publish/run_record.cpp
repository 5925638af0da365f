#include "publish/run_record.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "util/error.h"
#include "util/json_read.h"
#include "util/read_whole.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr int kFormat = 1;

json cell_json(const CellRecord& c) {
  json j{{"id", c.id}, {"status", c.status}};
  if (!c.detail.empty()) j["detail"] = c.detail;
  j["start_s"] = c.start_s ? json(*c.start_s) : json(nullptr);
  j["duration_s"] = c.duration_s;
  j["max_jobs"] = c.max_jobs;
  j["nvcc_threads"] = c.nvcc_threads;
  j["memory_gb"] = c.memory_gb;
  if (c.held_s) j["held_s"] = *c.held_s;
  if (c.job_setup_s) j["job_setup_s"] = *c.job_setup_s;
  j["toolchain"] = c.toolchain;
  j["versions"] = c.versions;
  if (!c.needs.empty()) j["needs"] = c.needs;
  if (!c.gpu_code.empty()) j["gpu_code"] = c.gpu_code;
  j[c.library ? "library" : "wheel"] = c.wheel;
  j["sha256"] = c.sha256;
  j["size"] = c.size;
  if (!c.build_record.empty()) j["build_record"] = c.build_record;
  j["log"] = c.log;
  j["dir"] = c.dir;
  j["python"] = c.python;
  j["platform"] = c.platform;
  if (!c.run.empty()) j["run"] = c.run;
  if (!c.stable_floor.empty()) j["stable_floor"] = c.stable_floor;
  if (!c.torch_proofs.empty()) {
    json proofs = json::array();
    for (const auto& p : c.torch_proofs) {
      json one{{"series", p.series}, {"torch", p.torch}, {"cuda", p.cuda}, {"ok", p.ok}, {"detail", p.detail}};
      if (!p.gpu.empty()) one["gpu"] = p.gpu;
      proofs.push_back(std::move(one));
    }
    j["torch_proofs"] = std::move(proofs);
  }
  if (!c.checked.empty()) j["checked"] = c.checked;
  return j;
}

CellRecord cell_from(const json& j) {
  CellRecord c;
  c.id = j.at("id").get<std::string>();
  c.status = j.at("status").get<std::string>();
  c.detail = j.value("detail", "");
  if (j.contains("start_s") && !j["start_s"].is_null()) c.start_s = j["start_s"].get<double>();
  c.duration_s = j.value("duration_s", 0.0);
  c.max_jobs = j.value("max_jobs", 0);
  c.nvcc_threads = j.value("nvcc_threads", 0);
  c.memory_gb = j.value("memory_gb", 0.0);
  if (j.contains("held_s") && j["held_s"].is_number()) c.held_s = j["held_s"].get<double>();
  if (j.contains("job_setup_s") && j["job_setup_s"].is_number()) c.job_setup_s = j["job_setup_s"].get<double>();
  c.toolchain = j.value("toolchain", "");
  if (j.contains("versions")) c.versions = j["versions"].get<std::map<std::string, std::string>>();
  if (j.contains("needs")) c.needs = j["needs"].get<std::map<std::string, std::string>>();
  if (j.contains("gpu_code")) c.gpu_code = j["gpu_code"].get<std::map<std::string, std::string>>();
  c.library = j.contains("library");
  c.wheel = j.value(c.library ? "library" : "wheel", "");
  c.sha256 = j.value("sha256", "");
  c.build_record = j.value("build_record", "");
  c.size = j.value("size", std::uint64_t{0});
  c.log = j.value("log", "");
  c.dir = j.value("dir", "");
  c.python = j.value("python", "");
  c.platform = j.value("platform", "");
  c.run = j.value("run", "");
  c.stable_floor = j.value("stable_floor", "");
  if (j.contains("torch_proofs")) {
    for (const auto& p : j["torch_proofs"]) {
      c.torch_proofs.push_back({p.value("series", ""), p.value("torch", ""), p.value("cuda", ""), p.value("ok", false),
                                p.value("detail", ""), p.value("gpu", "")});
    }
  }
  if (j.contains("checked")) c.checked = j["checked"].get<std::vector<std::string>>();
  return c;
}

json cells_json(const std::vector<CellRecord>& cells) {
  json a = json::array();
  for (const auto& c : cells) a.push_back(cell_json(c));
  return a;
}

std::vector<CellRecord> cells_from(const json& j, const char* key) {
  std::vector<CellRecord> cells;
  if (!j.contains(key)) return cells;
  for (const auto& c : j.at(key)) cells.push_back(cell_from(c));
  return cells;
}

// What is wrong with the report at `file`, where in it, as the error a command stops at prints it.
tl::unexpected<Failure> bad_report(const fs::path& file, const std::string& what, int line = 0, int column = 0) {
  return fail(printable(Location{file.string(), line, column}.str() + ": the run report is not valid: " + what),
              "fabuild wrote it; move it aside (the wheels and the index are not affected) and run again");
}

}  // namespace

std::string report_json(const RunRecord& run) {
  json j{{"format", kFormat},
         {"started", run.started},
         {"matrix", run.matrix},
         {"elapsed_s", run.elapsed_s},
         {"budget", {{"cores", run.budget_cores}, {"memory_gb", run.budget_memory_gb}}},
         {"exit_code", run.exit_code},
         {"cells", cells_json(run.cells)},
         {"preparation", cells_json(run.preparation)},
         {"earlier", cells_json(run.earlier)}};
  if (!run.torch_releases.empty()) {
    json releases = json::array();
    for (const auto& t : run.torch_releases) {
      releases.push_back(
          {{"version", t.version}, {"cuda", t.cuda}, {"first_seen", t.first_seen}, {"listed", t.listed}});
    }
    j["torch"] = {{"index", run.torch_index}, {"releases", std::move(releases)}, {"new", run.new_torch}};
  }
  if (run.remote) {
    const auto& r = *run.remote;
    j["remote_cache"] = {{"url", r.url},
                         {"write", r.write},
                         {"why", r.why},
                         {"trust", r.trust},
                         {"sent", r.sent},
                         {"kept", r.kept},
                         {"indexes_refused", r.indexes_refused},
                         {"dropped", r.dropped}};
  }
  return j.dump(2) + "\n";
}

Expected<RunRecord> parse_report(const std::string& text, const fs::path& file) {
  const std::optional<json> parsed = parse_json(text);
  if (!parsed) {
    const JsonSyntaxError error = json_syntax_error(text).value_or(JsonSyntaxError{"unknown syntax error", 0});
    int line = 1;
    int column = 1;
    for (std::size_t i = 0; i < error.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return bad_report(file, fmt::format("it is not JSON ({})", error.message), line, column);
  }
  const json& j = *parsed;
  if (!j.is_object()) return bad_report(file, "the top level is not an object");
  if (json_field_or<int>(j, "format", 0) != kFormat) {
    return bad_report(file, fmt::format("it has format {}, this fabuild reads format {}",
                                        json_field_or<int>(j, "format", 0), kFormat));
  }
  // The fields: nlohmann's value() and get() throw for one of another type, which is as much
  // a broken report as bad JSON.
  try {
    RunRecord run;
    run.started = j.value("started", "");
    run.matrix = j.value("matrix", "");
    run.elapsed_s = j.value("elapsed_s", 0.0);
    if (j.contains("budget")) {
      run.budget_cores = j["budget"].value("cores", 0.0);
      run.budget_memory_gb = j["budget"].value("memory_gb", 0.0);
    }
    run.exit_code = j.value("exit_code", 0);
    run.cells = cells_from(j, "cells");
    run.preparation = cells_from(j, "preparation");
    run.earlier = cells_from(j, "earlier");
    if (j.contains("torch")) {
      const json& t = j["torch"];
      run.torch_index = t.value("index", "");
      for (const auto& r : t.value("releases", json::array())) {
        run.torch_releases.push_back(
            {r.value("version", ""), r.value("cuda", ""), r.value("first_seen", ""), r.value("listed", true)});
      }
      if (t.contains("new")) run.new_torch = t["new"].get<std::vector<std::string>>();
    }
    if (j.contains("remote_cache")) {
      const json& r = j["remote_cache"];
      run.remote = RunRecord::RemoteUse{r.value("url", ""),
                                        r.value("write", true),
                                        r.value("why", ""),
                                        r.value("trust", ""),
                                        r.value("sent", std::uint64_t{0}),
                                        r.value("kept", std::uint64_t{0}),
                                        r.value("indexes_refused", std::uint64_t{0}),
                                        r.value("dropped", false)};
    }
    return run;
  } catch (const json::exception& e) {
    return bad_report(file, e.what());
  }
}

Expected<std::optional<RunRecord>> read_report(const fs::path& wheelhouse) {
  const fs::path file = wheelhouse / kReportName;
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::optional<RunRecord>();
  const std::optional<std::string> text = read_whole(file);
  if (!text) return bad_report(file, "it cannot be read");
  return parse_report(*text, file).map([](RunRecord run) { return std::optional<RunRecord>(std::move(run)); });
}

RunRecord with_earlier(RunRecord run, const std::optional<RunRecord>& previous) {
  run.earlier.clear();
  if (!previous) return run;
  std::set<std::string> now;
  for (const auto& c : run.cells) now.insert(c.id);
  for (CellRecord c : previous->cells) {
    if (now.insert(c.id).second) {
      c.run = previous->started;
      run.earlier.push_back(std::move(c));
    }
  }
  for (const auto& c : previous->earlier) {
    if (now.insert(c.id).second) run.earlier.push_back(c);
  }
  return run;
}

RunRecord with_torch_history(RunRecord run, const std::optional<RunRecord>& previous) {
  run.new_torch.clear();
  if (previous && run.torch_releases.empty()) {  // this run did not ask: the history stands
    run.torch_index = previous->torch_index;
    run.torch_releases = previous->torch_releases;
    return run;
  }
  if (!previous || previous->torch_releases.empty()) {
    for (auto& t : run.torch_releases) t.first_seen = run.started;
    return run;
  }
  std::map<std::string, const RunRecord::TorchSeen*> before;
  for (const auto& t : previous->torch_releases) before[t.version + "|" + t.cuda] = &t;
  std::set<std::string> now;
  for (auto& t : run.torch_releases) {
    const std::string key = t.version + "|" + t.cuda;
    now.insert(key);
    if (const auto it = before.find(key); it != before.end()) {
      t.first_seen = it->second->first_seen;
    } else {
      t.first_seen = run.started;
      run.new_torch.push_back(t.version);
    }
  }
  for (const auto& t : previous->torch_releases) {
    if (now.count(t.version + "|" + t.cuda)) continue;
    RunRecord::TorchSeen gone = t;
    gone.listed = false;
    run.torch_releases.push_back(std::move(gone));
  }
  return run;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(t));
}

}  // namespace fabuild
