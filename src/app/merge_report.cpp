#include "app/merge_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "util/error.h"

namespace fabuild {

namespace {

// "2025-11-22T03:04:05Z" as seconds since the epoch; nullopt when it is not that shape.
std::optional<std::time_t> parse_utc(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  if (in.fail()) return std::nullopt;
  using namespace std::chrono;
  const sys_days day{year{tm.tm_year + 1900} / (tm.tm_mon + 1) / tm.tm_mday};
  return system_clock::to_time_t(day + hours{tm.tm_hour} + minutes{tm.tm_min} + seconds{tm.tm_sec});
}

// The torch releases the parts' plans found (each job plans against the same index; one that
// asked later may know a release more), each once: listed where any part saw it listed, first
// seen when the earliest did; and what any part found new.
void merge_torch(RunRecord& merged, const RunRecord& part) {
  if (merged.torch_index.empty()) merged.torch_index = part.torch_index;
  for (const auto& t : part.torch_releases) {
    const auto same = std::find_if(merged.torch_releases.begin(), merged.torch_releases.end(),
                                   [&](const RunRecord::TorchSeen& m) { return m.version == t.version; });
    if (same == merged.torch_releases.end()) {
      merged.torch_releases.push_back(t);
      continue;
    }
    same->listed = same->listed || t.listed;
    if (!t.first_seen.empty() && (same->first_seen.empty() || t.first_seen < same->first_seen))
      same->first_seen = t.first_seen;
  }
  for (const auto& v : part.new_torch) {
    if (std::find(merged.new_torch.begin(), merged.new_torch.end(), v) == merged.new_torch.end())
      merged.new_torch.push_back(v);
  }
}

}  // namespace

std::optional<RunRecord> merged_run_record(const std::vector<std::filesystem::path>& parts,
                                           std::vector<std::string>& warnings) {
  std::vector<RunRecord> runs;
  for (const auto& part : parts) {
    Expected<std::optional<RunRecord>> run = read_report(part);
    if (!run) {
      warnings.push_back(fmt::format("{}; its cells are not on the merged page", run.error().what));
    } else if (*run) {
      runs.push_back(std::move(**run));
    }
  }
  if (runs.empty()) return std::nullopt;

  std::optional<std::time_t> origin;
  std::string origin_text = runs.front().started;
  for (const auto& run : runs) {
    const auto t = parse_utc(run.started);
    if (t && (!origin || *t < *origin)) {
      origin = t;
      origin_text = run.started;
    }
  }

  RunRecord merged;
  merged.started = origin_text;
  merged.matrix = runs.front().matrix;
  std::map<std::string, std::size_t> index;  // cell id -> position in merged.cells
  for (const auto& run : runs) {
    const auto t = parse_utc(run.started);
    const double shift = t && origin ? std::difftime(*t, *origin) : 0.0;
    merged.elapsed_s = std::max(merged.elapsed_s, shift + run.elapsed_s);
    merged.budget_cores += run.budget_cores;
    merged.budget_memory_gb += run.budget_memory_gb;
    merged.exit_code = std::max(merged.exit_code, run.exit_code);
    const auto moved = [shift](CellRecord c) {
      if (c.start_s) c.start_s = *c.start_s + shift;
      return c;
    };
    merge_torch(merged, run);
    for (const auto& c : run.preparation) merged.preparation.push_back(moved(c));
    for (const auto& c : run.earlier) merged.earlier.push_back(c);
    for (const auto& c : run.cells) {
      const auto it = index.find(c.id);
      if (it == index.end()) {
        index.emplace(c.id, merged.cells.size());
        merged.cells.push_back(moved(c));
      } else if (!merged.cells[it->second].built() && c.built()) {
        merged.cells[it->second] = moved(c);
      }
    }
  }
  // An earlier record of a cell this run has is out of date; of the others, one each.
  std::set<std::string> kept;
  std::erase_if(merged.earlier,
                [&](const CellRecord& c) { return index.count(c.id) != 0 || !kept.insert(c.id).second; });
  return merged;
}

}  // namespace fabuild
