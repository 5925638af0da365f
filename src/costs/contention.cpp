#include "costs/contention.h"

#include <algorithm>

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

}  // namespace fabuild
