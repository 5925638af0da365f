#include "matrix/select.h"

#include <algorithm>
#include <numeric>
#include <regex>
#include <set>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

#include "matrix/axes.h"
#include "matrix/match.h"
#include "matrix/torch_range.h"
#include "util/text.h"

namespace fabuild {

bool Filters::empty() const {
  return rocm.empty() && only.empty() &&
         std::all_of(axes.begin(), axes.end(), [](const auto& a) { return a.second.empty(); });
}

std::optional<Shard> parse_shard(const std::string& text) {
  if (text.size() > 64) return std::nullopt;  // std::regex recurses per character
  static const std::regex pattern(R"(^\s*(\d{1,6})\s*/\s*(\d{1,6})\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, pattern)) return std::nullopt;
  Shard s{std::stoi(m[1].str()), std::stoi(m[2].str())};
  if (s.count < 1 || s.index < 1 || s.index > s.count) return std::nullopt;
  return s;
}

namespace {

struct AxisFilter {
  const AxisRow* row;
  std::string flag;
  std::vector<std::string> values;
};

std::vector<const Cell*> universe(const Expansion& all) {
  std::vector<const Cell*> cells;
  for (const auto& c : all.cells) cells.push_back(&c);
  for (const auto& d : all.dropped) cells.push_back(&d.cell);
  return cells;
}

std::string values_on_axis(const std::vector<const Cell*>& cells, const AxisRow& row) {
  std::vector<std::string> seen;
  for (const Cell* c : cells) {
    if (c->library() && row.wheel_only) continue;
    std::string v = row.listed != nullptr ? row.listed(*c) : row.value(*c);
    if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(std::move(v));
  }
  return join(seen);
}

void check_axis_filter(const AxisFilter& f, const std::vector<const Cell*>& cells) {
  const AxisRow& row = *f.row;
  for (const auto& value : f.values) {
    if (!normalize_axis_value(row.axis, value)) {
      const std::vector<std::string> known = row.known != nullptr ? row.known() : std::vector<std::string>{};
      const std::string what = row.unknown.empty() ? fmt::format("not a {} value", row.key) : std::string(row.unknown);
      const std::string hint = !row.hint.empty() ? std::string(row.hint)
                               : known.empty()   ? "see fabuild --help for the values each filter takes"
                                                 : fmt::format("the {} values are {}", row.key, join(known));
      throw config_error(Location{}, fmt::format("{} {}: {}{}", f.flag, value, what, did_you_mean(value, known)), hint);
    }
    const bool any =
        std::any_of(cells.begin(), cells.end(), [&](const Cell* c) { return axis_matches(*c, row.axis, value); });
    if (!any) {
      throw config_error(Location{}, fmt::format("{} {} matches no cell of this matrix", f.flag, value),
                         fmt::format("its {} values are {}", row.key, values_on_axis(cells, row)));
    }
  }
}

void check_only(const std::vector<std::string>& only, const std::vector<const Cell*>& cells) {
  if (only.empty()) return;
  std::vector<std::string> ids;
  for (const Cell* c : cells) ids.push_back(c->id());
  for (const auto& pattern : only) {
    const bool any =
        std::any_of(ids.begin(), ids.end(), [&](const std::string& id) { return glob_match(pattern, id); });
    if (!any) {
      throw config_error(Location{},
                         fmt::format("--only {} names no cell of this matrix{}", pattern, did_you_mean(pattern, ids)),
                         "fabuild MATRIX --list prints every cell id");
    }
  }
}

bool picked(const Cell& cell, const std::vector<AxisFilter>& axis_filters, const std::vector<std::string>& only) {
  for (const auto& f : axis_filters) {
    const bool any = std::any_of(f.values.begin(), f.values.end(),
                                 [&](const std::string& v) { return axis_matches(cell, f.row->axis, v); });
    if (!any) return false;
  }
  if (only.empty()) return true;
  const std::string id = cell.id();
  return std::any_of(only.begin(), only.end(), [&](const std::string& p) { return glob_match(p, id); });
}

// Which cells and dropped cells the filters pick, after checking every filter value against
// the whole matrix (UserError for one that matches nothing).
struct Picks {
  std::vector<bool> cells, dropped;
};
Picks pick(const Expansion& all, const Filters& filters) {
  std::vector<AxisFilter> axis_filters;
  for (const AxisRow& row : axis_rows()) {
    const auto it = filters.axes.find(row.axis);
    AxisFilter f{&row, std::string(row.flag), it != filters.axes.end() ? it->second : std::vector<std::string>{}};
    // --torch '>=2.10,<2.14' is one range, which the flag's commas split.
    if (row.axis == Axis::kTorch) f.values = join_torch_range_bounds(f.values);
    if (!row.alt_key.empty() && !filters.rocm.empty()) {  // --rocm 6.2 is --cuda rocm6.2
      f.flag += "/--" + std::string(row.alt_key);
      for (const auto& r : filters.rocm) f.values.push_back(to_lower(r).starts_with("rocm") ? r : "rocm" + r);
    }
    if (!f.values.empty()) axis_filters.push_back(std::move(f));
  }
  const auto cells = universe(all);
  for (const auto& f : axis_filters) check_axis_filter(f, cells);
  check_only(filters.only, cells);

  Picks p;
  for (const auto& c : all.cells) p.cells.push_back(picked(c, axis_filters, filters.only));
  for (const auto& d : all.dropped) p.dropped.push_back(picked(d.cell, axis_filters, filters.only));
  return p;
}

// The picked elements of `from`, copied or moved (Item&& from a movable expansion).
template <class Item, class Vector>
std::vector<std::remove_cvref_t<Item>> keep(Vector& from, const std::vector<bool>& picked) {
  std::vector<std::remove_cvref_t<Item>> out;
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (picked[i]) out.push_back(static_cast<Item>(from[i]));
  }
  return out;
}

}  // namespace

Expansion select_cells(const Expansion& all, const Filters& filters) {
  const Picks p = pick(all, filters);
  Expansion out;
  out.warnings = all.warnings;
  out.notes = all.notes;
  out.stable = all.stable;
  out.cells = keep<const Cell&>(all.cells, p.cells);
  if (all.ids.size() == all.cells.size()) out.ids = keep<const std::string&>(all.ids, p.cells);
  out.dropped = keep<const DroppedCell&>(all.dropped, p.dropped);
  return out;
}

Expansion select_cells(Expansion&& all, const Filters& filters) {
  const Picks p = pick(all, filters);
  if (filters.empty()) return std::move(all);  // every cell is picked: nothing to copy
  Expansion out;
  out.warnings = std::move(all.warnings);
  out.notes = std::move(all.notes);
  out.stable = std::move(all.stable);
  out.cells = keep<Cell&&>(all.cells, p.cells);
  if (all.ids.size() == all.cells.size()) out.ids = keep<std::string&&>(all.ids, p.cells);
  out.dropped = keep<DroppedCell&&>(all.dropped, p.dropped);
  return out;
}

double expected_cost(const Cell& cell) { return static_cast<double>(std::max<std::size_t>(1, cell.archs().size())); }

std::string row_of(const Cell& cell) {
  std::string id = cell.id();
  if (!cell.abi3()) {
    const std::string tag = "-" + cell.python.str() + "-";
    if (const auto at = id.find(tag); at != std::string::npos) id.replace(at, tag.size(), "-*-");
  }
  return id + "|" + to_string(cell.archs());
}

std::vector<std::vector<std::size_t>> rows_of(const std::vector<Cell>& cells) {
  std::vector<std::vector<std::size_t>> rows;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto [it, inserted] = index.emplace(row_of(cells[i]), rows.size());
    if (inserted) rows.emplace_back();
    rows[it->second].push_back(i);
  }
  return rows;
}

double row_cost(const std::vector<Cell>& cells, const std::vector<std::size_t>& row) {
  double first = 0;
  for (std::size_t i : row) first = std::max(first, expected_cost(cells[i]));
  return first * (1.0 + kExtraTagCost * static_cast<double>(row.size() - 1));
}

std::vector<std::vector<std::size_t>> units_of(const std::vector<Cell>& cells, Rows rows) {
  if (rows == Rows::kKeep) return rows_of(cells);
  std::vector<std::vector<std::size_t>> units;
  for (std::size_t i = 0; i < cells.size(); ++i) units.push_back({i});
  return units;
}

std::vector<std::vector<std::size_t>> shard_all(const std::vector<Cell>& cells, int count, Rows rows) {
  const std::vector<std::vector<std::size_t>> units = units_of(cells, rows);
  std::vector<double> cost;
  std::vector<std::string> first_id;  // the smallest id of the unit: ties whatever the order
  for (const auto& u : units) {
    cost.push_back(row_cost(cells, u));
    std::string least = cells[u.front()].id();
    for (std::size_t i : u) least = std::min(least, cells[i].id());
    first_id.push_back(std::move(least));
  }
  std::vector<std::size_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return cost[a] != cost[b] ? cost[a] > cost[b] : first_id[a] < first_id[b];
  });
  std::vector<double> load(static_cast<std::size_t>(count), 0.0);
  std::vector<std::size_t> cells_in(load.size(), 0);
  std::vector<std::vector<std::size_t>> shards(load.size());
  for (std::size_t u : order) {
    // Least loaded shard; ties go to the one with fewer cells, then the lower index.
    std::size_t best = 0;
    for (std::size_t k = 1; k < load.size(); ++k) {
      if (load[k] < load[best] || (load[k] == load[best] && cells_in[k] < cells_in[best])) best = k;
    }
    load[best] += cost[u];
    cells_in[best] += units[u].size();
    shards[best].insert(shards[best].end(), units[u].begin(), units[u].end());
  }
  for (auto& shard : shards) std::sort(shard.begin(), shard.end());  // the input order
  return shards;
}

std::vector<Cell> shard_cells(const std::vector<Cell>& cells, const Shard& shard, Rows rows) {
  const auto shards = shard_all(cells, shard.count, rows);  // kept alive: the loop reads one of them
  std::vector<Cell> out;
  for (std::size_t i : shards[static_cast<std::size_t>(shard.index - 1)]) out.push_back(cells[i]);
  return out;
}

std::vector<Cell> shard_cells(std::vector<Cell>&& cells, const Shard& shard, Rows rows) {
  const auto shards = shard_all(cells, shard.count, rows);
  std::vector<Cell> out;
  for (std::size_t i : shards[static_cast<std::size_t>(shard.index - 1)]) out.push_back(std::move(cells[i]));
  return out;
}

}  // namespace fabuild
