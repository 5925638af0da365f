// What each cell resolves to once the includes are applied: archs, ROCm archs, the switches its
// profile turns off, and its patches (docs/matrix.md, docs/packages.md).

#include <algorithm>

#include <fmt/format.h>

#include "matrix/expand_parts.h"
#include "util/text.h"

namespace fabuild::expansion {

namespace {

// archs: the cell's own (include) > the matrix's for its CUDA set > the matrix's > the
// package default, trimmed to what this toolkit's nvcc knows (as its setup.py does).
void resolve_archs(const Cell& cell, CellSetup& out, const MatrixSpec& spec) {
  if (!out.archs.empty()) return;
  // The matrix's archs are its package's: another package's cells (an include's) take their
  // own default unless the include names archs.
  if (cell.package->name != spec.package->name) {
    out.archs = arch_era(*cell.package, cell.version).defaults;
    out.archs_from = fmt::format("{} default", cell.package->name);
    return;
  }
  if (const auto it = spec.archs.per_cuda.find(cell.cuda.toolkit); it != spec.archs.per_cuda.end()) {
    out.archs = it->second.value;
    out.archs_from = "archs for CUDA " + cell.cuda.toolkit.str();
    return;
  }
  if (spec.archs.all) {
    out.archs = spec.archs.all->value;
    out.archs_from = "archs";
    return;
  }
  const PackagePreset& package = *cell.package;
  if (cell.rocm()) {
    out.archs_from = fmt::format("{} default", package.name);
    return;
  }
  const ArchList defaults = arch_era(package, cell.version).defaults;
  for (int arch : defaults) {
    const auto it = spec.compat.arch_min_cuda.find(arch);
    if (it == spec.compat.arch_min_cuda.end() || !(cell.cuda.toolkit < it->second)) out.archs.push_back(arch);
  }
  out.archs_from = out.archs.size() == defaults.size() ? fmt::format("{} default", package.name)
                                                       : fmt::format("{} default, less what CUDA {} cannot build",
                                                                     package.name, cell.cuda.toolkit.str());
}

// A ROCm cell's GPU_ARCHS: the matrix's rocm_archs, else the package's default.
void resolve_rocm_archs(const Cell& cell, CellSetup& out, const MatrixSpec& spec) {
  if (!cell.rocm()) return;
  out.rocm_archs = spec.rocm_archs.empty() ? cell.package->default_rocm_archs : spec.rocm_archs;
}

// The switches the cell's profile turns off: the matrix's definition of that name, else the
// package's own. Throws for a name neither knows, or a switch the package does not have.
void resolve_profile(const Cell& cell, CellSetup& out, const MatrixSpec& spec) {
  if (cell.profile == kDefaultProfile) return;
  const PackagePreset& package = *cell.package;
  Location where = cell.origin().known() ? cell.origin() : Location{spec.file, 0, 0};
  for (const auto& p : spec.profiles) {
    if (p.value == cell.profile && p.where.line > 0 && !cell.origin().known()) where = p.where;
  }
  const auto& profiles = profiles_of(package, cell.artifact);
  if (const auto it = spec.profile_defs.find(cell.profile); it != spec.profile_defs.end()) {
    out.disabled = it->second.disable;
    where = it->second.where;
  } else if (const auto own = profiles.find(cell.profile); own != profiles.end()) {
    out.disabled = own->second;
  } else {
    std::vector<std::string> known = {std::string(kDefaultProfile)};
    for (const auto& [name, _] : profiles) known.push_back(name);
    for (const auto& [name, _] : spec.profile_defs) known.push_back(name);
    throw config_error(where,
                       fmt::format("unknown profile '{}' for {}{}{}", cell.profile, package.name,
                                   cell.library() ? "'s library" : "", did_you_mean(cell.profile, known)),
                       fmt::format("profiles: {}; define others under profiles: (docs/packages.md)", join(known)));
  }
  const auto& allowed = known_switches(package, cell.artifact);
  for (const auto& sw : out.disabled) {
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), sw) == allowed.end()) {
      const std::string whose = package.name + (cell.library() ? "'s library" : "");
      std::string hint = fmt::format("{}'s switches: {}", whose, join(allowed));
      const auto& other = known_switches(package, cell.library() ? Artifact::kWheel : Artifact::kLibrary);
      if (package.library && std::find(other.begin(), other.end(), sw) != other.end()) {
        hint += fmt::format(" ({} is a switch of its {} only)", sw, cell.library() ? "wheel" : "library");
      }
      throw config_error(where,
                         fmt::format("profile '{}' turns off {}, which {} does not have{}", cell.profile, sw, whose,
                                     did_you_mean(sw, allowed)),
                         hint);
    }
  }
}

// A profile that turns a package's SM80 switch off (FlashAttention 3's minimal) builds no sm_80
// kernels: the archs say so, rather than claim 80.
void drop_disabled_archs(const Cell& cell, CellSetup& out) {
  const auto& known = cell.package->switches.known;
  if (std::find(out.disabled.begin(), out.disabled.end(), "SM80") == out.disabled.end() ||
      std::find(known.begin(), known.end(), "SM80") == known.end()) {
    return;
  }
  if (std::erase(out.archs, 80) > 0)
    out.archs_from += fmt::format(", less 80 (profile {} turns SM80 off)", cell.profile);
}

// The patch files of every rule whose version pattern matches the cell's version, in order.
void resolve_patches(Cell& cell, const MatrixSpec& spec) {
  if (cell.package->name != spec.package->name) return;  // patches are for the matrix's package
  for (const auto& rule : spec.patches) {
    const bool match = has_glob(rule.version) ? glob_match(rule.version, cell.version.str())
                                              : Version::parse(rule.version) == cell.version;
    if (match) cell.patches.insert(cell.patches.end(), rule.files.begin(), rule.files.end());
  }
}

// Releases of one arch era resolve alike (flash-attn 2.8.0 ... 2.8.3).
// The cell's arch era among its package's, as a key: null where none applies.
const ArchEra* era_of(const Cell& cell) { return release_era(*cell.package, cell.version); }

}  // namespace

Resolver::Key Resolver::key_of(const Cell& cell) {
  return {cell.setup.get(), cell.package.get(), cell.cuda.backend,
          cell.profile,     cell.cuda.toolkit,  cell.cuda.toolkit.release().size(),
          era_of(cell),     cell.artifact};
}

// Compared field by field, without making a key: most cells take their neighbour's setup.
bool Resolver::same_as_last(const Cell& cell) const {
  if (last_ == nullptr) return false;
  const auto& [setup, package, backend, profile, toolkit, numbers, era, artifact] = last_->first;
  return setup == cell.setup.get() && package == cell.package.get() && backend == cell.cuda.backend &&
         profile == cell.profile && toolkit == cell.cuda.toolkit && numbers == cell.cuda.toolkit.release().size() &&
         era == era_of(cell) && artifact == cell.artifact;
}

void Resolver::resolve(Cell& cell) {
  if (!same_as_last(cell)) {
    Key key = key_of(cell);
    auto found = made_.find(key);
    if (found == made_.end()) {
      auto setup = std::make_shared<CellSetup>(*cell.setup);
      resolve_archs(cell, *setup, spec_);
      resolve_rocm_archs(cell, *setup, spec_);
      resolve_profile(cell, *setup, spec_);
      drop_disabled_archs(cell, *setup);
      found = made_.emplace(std::move(key), Made{cell.setup, std::move(setup)}).first;
    }
    last_ = &*found;
  }
  cell.setup = last_->second.second;
  resolve_patches(cell, spec_);
}

}  // namespace fabuild::expansion
