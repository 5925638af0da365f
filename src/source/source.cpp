#include "source/source.h"

#include <fmt/format.h>

namespace fabuild {

SourcePlan plan_source(const Cell& cell, const SourceSpec& spec) {
  const std::string requirement = fmt::format("{}=={}", cell.package->name, cell.version.str());
  switch (spec.kind) {
    case SourceSpec::Kind::kPath:
      return {requirement, "the directory " + spec.location};
    case SourceSpec::Kind::kSdist:
      return {requirement, "the sdist " + spec.location};
    case SourceSpec::Kind::kGit:
      return {requirement, fmt::format("git clone --recursive {} at {}", spec.location, spec.ref)};
    case SourceSpec::Kind::kPip:
      break;
  }
  return {requirement, "sdist through pip's configured index"};
}

std::string describe(const SourcePlan& plan) { return fmt::format("{} ({})", plan.requirement, plan.how); }

}  // namespace fabuild
