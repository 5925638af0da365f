#include "matrix/stable_cells.h"

#include <algorithm>

#include <fmt/format.h>

#include "matrix/preset.h"
#include "util/text.h"

namespace fabuild {

namespace {

// The package switch a needed variable turns off: FLASH_ATTENTION_DISABLE_DROPOUT is DROPOUT,
// whichever prefix the package's own switches take (FlashAttention 2's are defines,
// FLASHATTENTION_DISABLE_*, and its stable port reads the variable). "" for an opt-in of its own.
std::string switch_of(const PackagePreset& package, const std::string& variable) {
  const std::size_t at = variable.rfind("DISABLE_");
  if (at == std::string::npos) return {};
  const std::string name = variable.substr(at + 8);
  const auto& known = known_switches(package, Artifact::kWheel);
  return std::find(known.begin(), known.end(), name) != known.end() ? name : std::string();
}

// The package's profiles that turn `sw` off, for the hint.
std::string profiles_turning_off(const Cell& cell, const std::string& sw) {
  std::vector<std::string> names;
  for (const auto& [name, off] : profiles_of(*cell.package, Artifact::kWheel)) {
    if (std::find(off.begin(), off.end(), sw) != off.end()) names.push_back(name);
  }
  return names.empty() ? fmt::format("a profile that turns {} off", sw) : "profile " + join(names, " or ");
}

}  // namespace

StableVerdict stable_verdict(const Cell& cell, const std::vector<std::string>& switches_off, StableMode mode) {
  StableVerdict v;
  if (mode == StableMode::kNo || cell.library() || !cell.command().empty()) return v;
  const auto& stable = cell.package->stable;
  if (!stable) {
    v.why = fmt::format(
        "the plan found no TORCH_TARGET_VERSION in {}'s setup.py (a source directory's is read "
        "when the plan is made, a git or sdist source's only when it is built: name it with "
        "source: {{path: DIR}})",
        cell.package->name);
    return v;
  }
  if (cell.rocm()) {
    v.why = "a ROCm build is not built against torch's stable ABI";
    return v;
  }
  if (cell.torch < stable->from) {
    v.why = fmt::format("torch {} is older than {}, from which {} builds against torch's stable ABI", cell.torch.str(),
                        stable->from.str(), stable->where);
    return v;
  }
  for (std::size_t i = 0; i < stable->needs.size(); ++i) {
    const std::string& variable = stable->needs[i];
    const std::string sw = switch_of(*cell.package, variable);
    if (sw.empty()) {
      if (mode == StableMode::kYes) continue;  // an opt-in: stable_abi: true sets it
      v.why = fmt::format(
          "{} builds against torch's stable ABI only with {}=TRUE ({}), an opt-in that "
          "stable_abi: true sets",
          stable->where, variable, stable->needs_where[i]);
      return v;
    }
    if (std::find(switches_off.begin(), switches_off.end(), sw) == switches_off.end()) {
      v.why = fmt::format(
          "{} builds against torch's stable ABI only with {}=TRUE ({}), and profile {} keeps {}; "
          "{} builds it",
          stable->where, variable, stable->needs_where[i], cell.profile, to_lower(sw), profiles_turning_off(cell, sw));
      v.profile_keeps = true;
      return v;
    }
  }
  v.can = true;
  return v;
}

bool may_have_stable_cells(const MatrixSpec& spec) {
  const auto& stable = spec.package->stable;
  if (!stable || spec.stable_abi == StableMode::kNo) return false;
  if (spec.stable_abi == StableMode::kYes) return true;
  return std::all_of(stable->needs.begin(), stable->needs.end(),
                     [&](const std::string& v) { return !switch_of(*spec.package, v).empty(); });
}

std::vector<std::string> stable_build_variables(const Cell& cell) {
  if (!cell.stable() || !cell.package->stable) return {};
  return cell.package->stable->needs;
}

}  // namespace fabuild
