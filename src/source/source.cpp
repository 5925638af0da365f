#include "source/source.h"

#include <fmt/format.h>

namespace fabuild {

SourcePlan plan_source(const Cell& cell) {
  return {fmt::format("{}=={}", cell.package->name, cell.version.str()), "sdist through pip's configured index"};
}

std::string describe(const SourcePlan& plan) { return fmt::format("{} ({})", plan.requirement, plan.how); }

}  // namespace fabuild
