#include "costs/contention.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace fabuild {

double contention(double busy) { return 1 + kContention * std::clamp(busy, 0.0, 1.0); }

RowCosts at_busy(const RowCosts& record, double busy) {
  RowCosts out = record;
  for (auto& [unit, cost] : out.units) {
    if (!cost.busy) continue;
    const double factor = contention(busy) / contention(*cost.busy);
    cost.cpu_s *= factor;
    cost.wall_s *= factor;
    cost.busy = std::clamp(busy, 0.0, 1.0);
  }
  return out;
}

std::optional<double> recorded_busy(const RowCosts& record) {
  double weighted = 0, cpu = 0;
  for (const auto& [unit, cost] : record.units) {
    if (!cost.busy) continue;
    weighted += *cost.busy * cost.cpu_s;
    cpu += cost.cpu_s;
  }
  if (cpu <= 0) return std::nullopt;
  return weighted / cpu;
}

std::string loads_said(std::size_t rows, double least, double most) {
  const auto pct = [](double busy) { return static_cast<int>(std::lround(busy * 100)); };
  const std::string busy =
      pct(least) == pct(most) ? fmt::format("{} %", pct(most)) : fmt::format("{}-{} %", pct(least), pct(most));
  return fmt::format(
      "{} of them recorded on a machine {} busy, timed as a runner's own compiles load it ({:.2f} "
      "times the CPU at most)",
      rows, busy, contention(1.0) / contention(least));
}

}  // namespace fabuild
