#include "costs/row_costs.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "matrix/select.h"
#include "util/hash.h"
#include "util/json_read.h"

namespace fabuild {

std::string compile_row(const Cell& cell) {
  // The row that shards keep whole (matrix/select.h: the id less its Python tag, and the archs),
  // and what else makes two cells compile differently: the package, the toolkit, where it
  // builds, its env and its patches.
  std::string row =
      fmt::format("{}|{}|{}|{}", cell.package->name, row_of(cell), cell.cuda.toolkit.str(), to_string(cell.provision));
  for (const auto& [k, v] : cell.env()) row += "|" + k + "=" + v;
  for (const auto& p : cell.patches) row += "|patch=" + p;
  return row;
}

std::string remote_row_key(const Cell& cell) { return hex(sha256_of("fabuild-remote-row-1\n" + compile_row(cell))); }

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool skipped_dir(const std::string& name) {
  static const char* const kPrefixes[] = {"test", "example", "benchmark"};
  if (name == "cutlass" || name == "third_party" || name == "build" || name.starts_with('.')) return true;
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes), [&](const char* p) { return name.starts_with(p); });
}

}  // namespace

bool kernel_unit(const std::string& name) { return name.ends_with(".cu"); }

double RowCosts::kernel_cpu_s() const {
  double sum = 0;
  for (const auto& [unit, cost] : units) {
    if (kernel_unit(unit)) sum += cost.cpu_s;
  }
  return sum;
}

std::optional<double> RowCosts::kernel_mean_cpu_s() const {
  const auto n = std::count_if(units.begin(), units.end(), [](const auto& u) { return kernel_unit(u.first); });
  if (n == 0) return std::nullopt;
  return kernel_cpu_s() / static_cast<double>(n);
}

double peak_mb_at(const std::string& unit, const UnitCost& cost, int nvcc_threads) {
  if (!kernel_unit(unit)) return cost.peak_mb;
  return cost.peak_mb * std::max(1, nvcc_threads) / std::max(1, cost.threads);
}

double RowCosts::kernel_peak_mb(int nvcc_threads) const {
  double peak = 0;
  for (const auto& [unit, cost] : units) {
    if (kernel_unit(unit)) peak = std::max(peak, peak_mb_at(unit, cost, nvcc_threads));
  }
  return peak;
}

std::optional<double> RowCosts::setup_s() const {
  if (setups.empty()) return std::nullopt;
  return std::max_element(setups.begin(), setups.end(),
                          [](const SetupTime& a, const SetupTime& b) { return a.seconds < b.seconds; })
      ->seconds;
}

bool RowCosts::add_setup(const SetupTime& setup) {
  const auto same = [&](const SetupTime& s) { return s.recorded == setup.recorded; };
  if (setup.seconds < 0 || std::any_of(setups.begin(), setups.end(), same)) return false;
  // Oldest first: `recorded` begins with its UTC time, which sorts as text.
  const auto at = std::upper_bound(setups.begin(), setups.end(), setup,
                                   [](const SetupTime& a, const SetupTime& b) { return a.recorded < b.recorded; });
  setups.insert(at, setup);
  if (setups.size() > kSetupsKept) setups.erase(setups.begin(), setups.end() - kSetupsKept);
  return true;
}

CostsAdded add_theirs(RowCosts& mine, const RowCosts& theirs) {
  CostsAdded added;
  for (const auto& [unit, cost] : theirs.units) added.units += mine.units.emplace(unit, cost).second ? 1 : 0;
  if (mine.recorded.empty()) mine.recorded = theirs.recorded;
  if (mine.built.empty()) mine.built = theirs.built;
  for (const SetupTime& s : theirs.setups) added.setups += mine.add_setup(s) ? 1 : 0;
  return added;
}

json to_json(const RowCosts& costs) {
  json units = json::object();
  for (const auto& [unit, c] : costs.units) {
    units[unit] = {{"wall_s", c.wall_s}, {"cpu_s", c.cpu_s}, {"peak_mb", c.peak_mb}, {"threads", c.threads}};
    if (c.busy) units[unit]["busy"] = *c.busy;  // an earlier fabuild reads the record without it
  }
  json j{{"version", 1}, {"recorded", costs.recorded}, {"units", units}};
  if (!costs.setups.empty()) {
    json setups = json::array();
    for (const SetupTime& s : costs.setups) setups.push_back({{"seconds", s.seconds}, {"recorded", s.recorded}});
    j["setups"] = setups;  // an earlier fabuild reads the record without them
  }
  if (!costs.built.empty()) j["built"] = costs.built;
  return j;
}

// A value of another type ("cpu_s": "12") is no record: nullopt, not a default.
std::optional<RowCosts> row_costs_from_json(const std::string& text) {
  const std::optional<json> doc = parse_json(text);
  if (!doc || json_field<int>(*doc, "version") != 1) return std::nullopt;
  const json& j = *doc;
  const auto units = json_field<json>(j, "units");
  const auto recorded = json_field_or_absent<std::string>(j, "recorded", "");
  if (!units || !units->is_object() || !recorded) return std::nullopt;
  RowCosts costs;
  costs.recorded = *recorded;
  for (const auto& [unit, c] : units->items()) {
    const auto wall = json_field_or_absent(c, "wall_s", 0.0);
    const auto cpu = json_field_or_absent(c, "cpu_s", 0.0);
    const auto peak = json_field_or_absent(c, "peak_mb", 0.0);
    const auto threads = json_field_or_absent(c, "threads", 1);
    const auto busy = json_field_or_absent(c, "busy", -1.0);
    if (!wall || !cpu || !peak || !threads || !busy) return std::nullopt;
    UnitCost u{*wall, *cpu, *peak, *threads};
    if (u.wall_s < 0 || u.cpu_s < 0 || u.peak_mb < 0 || u.threads < 1 || *busy > 1) return std::nullopt;
    if (*busy >= 0) u.busy = *busy;
    costs.units[unit] = u;
  }
  if (const auto it = j.find("setups"); it != j.end()) {
    if (!it->is_array()) return std::nullopt;
    for (const auto& s : *it) {
      const auto seconds = json_field<double>(s, "seconds");
      const auto when = json_field<std::string>(s, "recorded");
      if (!seconds || !when || *seconds < 0 || when->empty()) return std::nullopt;
      costs.add_setup(SetupTime{*seconds, *when});
    }
  }
  if (const auto it = j.find("built"); it != j.end()) {
    if (!it->is_array()) return std::nullopt;
    for (const auto& unit : *it) {
      if (!unit.is_string()) return std::nullopt;
      costs.built.push_back(unit.get<std::string>());
    }
  }
  return costs;
}

fs::path row_costs_path(const fs::path& cache_root, const std::string& row_key) {
  return cache_root / "costs" / (row_key + ".json");
}

std::optional<RowCosts> read_row_costs(const Files& files, const fs::path& path) {
  const Expected<std::string> text = files.read(path);
  return text ? row_costs_from_json(*text) : std::nullopt;
}

void save_row_costs(Files& files, const fs::path& path, const RowCosts& costs) {
  // A record only makes later plans better; the build stands without it: a failure is ignored.
  if (files.create_directories(path.parent_path())) files.write(path, to_json(costs).dump(1));
}

std::size_t record_compiles(RowCosts& costs, const std::vector<MeasuredCompile>& compiles, const fs::path& tree,
                            const std::string& recorded, int nvcc_threads) {
  std::size_t added = 0;
  const std::string root = tree.lexically_normal().string() + "/";
  for (const MeasuredCompile& c : compiles) {
    if (c.cpu_ms == 0 && c.wall_ms == 0) continue;
    const std::string unit =
        c.source.starts_with(root) ? c.source.substr(root.size()) : fs::path(c.source).filename().string();
    UnitCost& cost = costs.units[unit] =
        UnitCost{static_cast<double>(c.wall_ms) / 1000, static_cast<double>(c.cpu_ms) / 1000,
                 static_cast<double>(c.peak_kb) / 1024, kernel_unit(unit) ? std::max(1, nvcc_threads) : 1};
    if (c.busy_pct >= 0 && c.busy_pct <= 100) cost.busy = c.busy_pct / 100.0;
    ++added;
  }
  if (added > 0) costs.recorded = recorded;
  return added;
}

std::vector<std::string> kernel_units(const Files& files, const fs::path& tree) {
  std::vector<std::string> units;
  const auto skipped = [](const fs::path& dir) { return skipped_dir(dir.filename().string()); };
  for (const fs::path& file : files.files_under(tree, skipped).value_or(std::vector<fs::path>())) {
    if (kernel_unit(file.filename().string())) units.push_back(file.lexically_relative(tree).string());
  }
  std::sort(units.begin(), units.end());
  return units;
}

namespace {

constexpr double kBackward = 1.4;
constexpr double kBackwardOff = 0.05;
constexpr double kSplit = 1.3;

}  // namespace

double guessed_cost(const std::string& unit, bool backward_off) {
  const std::string name = fs::path(unit).filename().string();
  if (name.find("bwd") != std::string::npos) return backward_off ? kBackwardOff : kBackward;
  if (name.find("split") != std::string::npos) return kSplit;
  return 1.0;
}

std::string guessed_costs_said(bool backward_off) {
  return fmt::format("guessed (1 a forward kernel, {:g} a split-KV one, {:g} a backward one{})", kSplit,
                     backward_off ? kBackwardOff : kBackward, backward_off ? ": the profile turns BACKWARD off" : "");
}

ShareSplitPlan split_units(const std::vector<std::string>& units, const RowCosts* costs, int count, bool backward_off) {
  ShareSplitPlan plan;
  plan.load.assign(static_cast<std::size_t>(std::max(count, 1)), 0.0);
  const std::optional<double> known_mean = costs != nullptr ? costs->kernel_mean_cpu_s() : std::nullopt;
  plan.measured = known_mean.has_value();
  const double mean = known_mean.value_or(0);
  std::vector<std::pair<double, std::string>> order;
  for (const auto& u : units) {
    double cost = guessed_cost(u, backward_off);
    if (plan.measured) {
      const auto it = costs->units.find(u);
      cost = it != costs->units.end() ? it->second.cpu_s : mean;
      plan.recorded_units += it != costs->units.end() ? 1 : 0;
    }
    order.emplace_back(cost, u);
  }
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (const auto& [cost, unit] : order) {
    const auto least = std::min_element(plan.load.begin(), plan.load.end());
    *least += cost;
    plan.share_of[unit] = static_cast<int>(least - plan.load.begin()) + 1;
    plan.cost[unit] = cost;
  }
  return plan;
}

objcache::ShareSplit share_split_for(const ShareSplitPlan& plan, const fs::path& tree, int index, int count) {
  objcache::ShareSplit split;
  split.index = index;
  split.count = count;
  for (const auto& [unit, k] : plan.share_of) split.unit_share[(tree / unit).lexically_normal().string()] = k;
  return split;
}

}  // namespace fabuild
