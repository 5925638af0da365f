#include "publish/run_record.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "util/error.h"
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
  j[c.library ? "library" : "wheel"] = c.wheel;
  j["sha256"] = c.sha256;
  j["size"] = c.size;
  j["log"] = c.log;
  j["dir"] = c.dir;
  j["python"] = c.python;
  j["platform"] = c.platform;
  if (!c.run.empty()) j["run"] = c.run;
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
  c.library = j.contains("library");
  c.wheel = j.value(c.library ? "library" : "wheel", "");
  c.sha256 = j.value("sha256", "");
  c.size = j.value("size", std::uint64_t{0});
  c.log = j.value("log", "");
  c.dir = j.value("dir", "");
  c.python = j.value("python", "");
  c.platform = j.value("platform", "");
  c.run = j.value("run", "");
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

UserError bad_report(const fs::path& file, const std::string& what, int line = 0, int column = 0) {
  return UserError(kExitCellFailed, Location{file.string(), line, column}, "the run report is not valid: " + what,
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
  return j.dump(2) + "\n";
}

RunRecord parse_report(const std::string& text, const fs::path& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    int line = 1;
    int column = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw bad_report(file, fmt::format("it is not JSON ({})", e.what()), line, column);
  }
  try {
    if (!j.is_object()) throw bad_report(file, "the top level is not an object");
    if (j.value("format", 0) != kFormat) {
      throw bad_report(file,
                       fmt::format("it has format {}, this fabuild reads format {}", j.value("format", 0), kFormat));
    }
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
    return run;
  } catch (const json::exception& e) {
    throw bad_report(file, e.what());
  }
}

std::optional<RunRecord> read_report(const fs::path& wheelhouse) {
  const fs::path file = wheelhouse / kReportName;
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  const std::optional<std::string> text = read_whole(file);
  if (!text) throw bad_report(file, "it cannot be read");
  return parse_report(*text, file);
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

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(t));
}

}  // namespace fabuild
