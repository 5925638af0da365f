#include "costs/borrowed.h"

#include <algorithm>

namespace fabuild {

bool may_borrow(const Cell& cell) { return !cell.library() && !cell.stable() && cell.command().empty(); }

std::vector<Version> borrow_order(const Cell& cell, const std::vector<Version>& series) {
  const Version mine = cell.torch_series();
  std::vector<Version> older;
  std::vector<Version> newer;
  for (const Version& v : series) {
    const Version s = v.series_version();
    if (s == mine) continue;
    auto& side = s < mine ? older : newer;
    if (std::find(side.begin(), side.end(), s) == side.end()) side.push_back(s);
  }
  std::sort(older.begin(), older.end(), [](const Version& a, const Version& b) { return b < a; });
  std::sort(newer.begin(), newer.end());
  older.insert(older.end(), newer.begin(), newer.end());
  return older;
}

Cell sibling_for(const Cell& cell, const Version& torch) {
  Cell sibling = cell;
  sibling.torch = torch;
  return sibling;
}

}  // namespace fabuild
