#include "matrix/expand.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "matrix/match.h"
#include "matrix/rules.h"
#include "util/text.h"

namespace fabuild {

namespace {

Cell base_cell(const MatrixSpec& spec) {
  Cell c;
  c.package = spec.package;
  c.provision = spec.provision;
  c.env = spec.env;
  c.command = spec.command;
  c.build = spec.build;
  return c;
}

std::vector<Cell> cross_product(const MatrixSpec& spec) {
  std::vector<Cell> cells;
  const Cell base = base_cell(spec);
  for (const auto& v : spec.versions)
    for (const auto& t : spec.torch)
      for (const auto& c : spec.cuda)
        for (const auto& p : spec.python)
          for (const auto& pl : spec.platforms)
            for (const auto& a : spec.abis)
              for (const auto& pr : spec.profiles) {
                Cell cell = base;
                cell.version = v.value;
                cell.torch = t.value;
                cell.cuda = c.value;
                cell.python = p.value;
                cell.platform = pl.value;
                cell.abi = a.value;
                cell.profile = pr.value;
                resolve(cell, spec.compat);
                cells.push_back(std::move(cell));
              }
  return cells;
}

void apply_settings(Cell& cell, const CellSettings& s) {
  if (s.archs) {
    cell.archs = s.archs->value;
    cell.archs_from = "include at line " + std::to_string(s.archs->where.line);
  }
  if (s.provision) cell.provision = *s.provision;
  if (!s.command.empty()) cell.command = s.command;
  for (const auto& [k, v] : s.env) cell.env[k] = v;
  if (s.build.max_jobs) cell.build.max_jobs = s.build.max_jobs;
  if (s.build.nvcc_threads) cell.build.nvcc_threads = s.build.nvcc_threads;
  if (s.build.memory_per_thread_gb) cell.build.memory_per_thread_gb = s.build.memory_per_thread_gb;
  if (s.build.timeout_s) cell.build.timeout_s = s.build.timeout_s;
  if (s.build.kill_grace_s) cell.build.kill_grace_s = s.build.kill_grace_s;
  if (s.source) cell.source = s.source;
}

const AxisMatch* find_axis(const MatrixEntry& entry, Axis axis) {
  for (const auto& m : entry.match) {
    if (m.axis == axis) return &m;
  }
  return nullptr;
}

// A new cell from an include that extends nothing: its own axis values, and for axes it
// leaves out, the matrix's value where the matrix has exactly one. An include of another
// package names its version; an abi3 package needs no Python (its lowest is taken later).
Cell new_cell(const MatrixSpec& spec, const MatrixEntry& entry) {
  Cell cell = base_cell(spec);
  cell.origin = entry.where;
  std::vector<std::string> missing;
  if (const auto* m = find_axis(entry, Axis::kPackage); m && m->values.front() != spec.package->name) {
    cell.package = find_preset(m->values.front());
    if (find_axis(entry, Axis::kVersion) == nullptr) {
      throw config_error(entry.where, fmt::format("this include adds {} cells but names no version", cell.package->name),
                         fmt::format("add version: (the matrix's versions are {}'s)", spec.package->name));
    }
  }
  const auto take = [&](Axis axis, auto& field, const auto& values, auto parse) {
    if (const auto* m = find_axis(entry, axis)) {
      field = parse(m->values.front());
    } else if (values.size() == 1) {
      field = values.front().value;
    } else {
      missing.push_back(axis_key(axis));
    }
  };
  take(Axis::kVersion, cell.version, spec.versions, [](const std::string& s) { return *Version::parse(s); });
  take(Axis::kTorch, cell.torch, spec.torch, [](const std::string& s) { return *Version::parse(s); });
  take(Axis::kCuda, cell.cuda, spec.cuda, [](const std::string& s) { return parse_gpu_set(s); });
  if (cell.abi3() && find_axis(entry, Axis::kPython) == nullptr) {
    // Its one wheel serves every Python of the matrix; the lowest from the floor up builds it.
    const PythonTag floor = *PythonTag::parse(cell.package->abi3);
    cell.python = spec.python.front().value;
    for (const auto& p : spec.python) {
      cell.abi3_pythons.push_back(p.value);
      if (!(p.value < floor) && (p.value < cell.python || cell.python < floor)) cell.python = p.value;
    }
  } else {
    take(Axis::kPython, cell.python, spec.python, [](const std::string& s) { return *PythonTag::parse(s); });
  }
  take(Axis::kPlatform, cell.platform, spec.platforms, [](const std::string& s) { return *parse_platform(s); });
  take(Axis::kAbi, cell.abi, spec.abis, [](const std::string& s) { return *parse_abi(s); });
  take(Axis::kProfile, cell.profile, spec.profiles, [](const std::string& s) { return s; });
  if (!missing.empty()) {
    throw config_error(entry.where,
                       fmt::format("this include matches no cell, and cannot add one: it does not say which {} "
                                   "(the matrix lists several)",
                                   join(missing, ", ")),
                       "to extend cells, use values the matrix has; to add a cell, name every axis that has "
                       "more than one value");
  }
  resolve(cell, spec.compat);
  return cell;
}

bool same_axes(const Cell& a, const Cell& b) {
  return a.package->name == b.package->name && a.version == b.version && a.torch == b.torch &&
         a.cuda.toolkit == b.cuda.toolkit && a.cuda.backend == b.cuda.backend && a.cuda.torch_cuda == b.cuda.torch_cuda &&
         a.python == b.python && a.platform == b.platform && a.abi == b.abi && a.profile == b.profile;
}

// An abi3 package's cells that differ only in their Python tag become one, built with the
// lowest of them from the package's floor up (cp39: a cp38 cell has no abi3 wheel).
std::vector<Cell> collapse_abi3(std::vector<Cell> cells, std::vector<std::string>& notes) {
  std::vector<Cell> out;
  for (auto& cell : cells) {
    if (!cell.abi3()) {
      out.push_back(std::move(cell));
      continue;
    }
    const PythonTag floor = *PythonTag::parse(cell.package->abi3);
    auto same = std::find_if(out.begin(), out.end(), [&](const Cell& c) {
      Cell probe = cell;
      probe.python = c.python;
      return c.abi3() && same_axes(c, probe);
    });
    if (same == out.end()) {
      if (cell.abi3_pythons.empty()) cell.abi3_pythons = {cell.python};
      out.push_back(std::move(cell));
      continue;
    }
    same->abi3_pythons.push_back(cell.python);
    if (cell.python < same->python && !(cell.python < floor)) same->python = cell.python;
    if (same->python < floor && !(cell.python < floor)) same->python = cell.python;
  }
  for (const auto& cell : out) {
    if (!cell.abi3() || cell.abi3_pythons.size() < 2) continue;
    std::vector<std::string> tags;
    for (const auto& t : cell.abi3_pythons) tags.push_back(t.str());
    notes.push_back(fmt::format("{}: one {}-abi3 wheel serves python {} (built with {})", cell.id(), cell.package->abi3,
                                join(tags, ", "), cell.python.str()));
  }
  return out;
}

std::vector<Cell> apply_include(const MatrixSpec& spec, std::vector<Cell> cells) {
  const std::size_t original = cells.size();
  for (const auto& entry : spec.include) {
    bool extended = false;
    // GitHub Actions semantics: an include extends the original combinations it agrees with;
    // cells added by earlier includes are not extended.
    for (std::size_t i = 0; i < original; ++i) {
      if (entry_matches(cells[i], entry)) {
        apply_settings(cells[i], entry.settings);
        extended = true;
      }
    }
    if (extended) continue;
    Cell cell = new_cell(spec, entry);
    // Two includes that name the same new cell describe one cell, not two.
    const auto same = std::find_if(cells.begin() + static_cast<std::ptrdiff_t>(original), cells.end(),
                                   [&](const Cell& added) { return same_axes(added, cell); });
    if (same != cells.end()) {
      apply_settings(*same, entry.settings);
    } else {
      apply_settings(cell, entry.settings);
      cells.push_back(std::move(cell));
    }
  }
  return cells;
}

// archs: the cell's own (include) > the matrix's for its CUDA set > the matrix's > the
// package default, trimmed to what this toolkit's nvcc knows (as its setup.py does).
void resolve_archs(Cell& cell, const MatrixSpec& spec) {
  if (!cell.archs.empty()) return;
  // The matrix's archs are its package's: another package's cells (an include's) take their
  // own default unless the include names archs.
  if (cell.package->name != spec.package->name) {
    cell.archs = cell.package->default_archs;
    cell.archs_from = fmt::format("{} default", cell.package->name);
    return;
  }
  if (const auto it = spec.archs.per_cuda.find(cell.cuda.toolkit); it != spec.archs.per_cuda.end()) {
    cell.archs = it->second.value;
    cell.archs_from = "archs for CUDA " + cell.cuda.toolkit.str();
    return;
  }
  if (spec.archs.all) {
    cell.archs = spec.archs.all->value;
    cell.archs_from = "archs";
    return;
  }
  const PackagePreset& package = *cell.package;
  if (cell.rocm()) {
    cell.archs_from = fmt::format("{} default", package.name);
    return;
  }
  for (int arch : package.default_archs) {
    const auto it = spec.compat.arch_min_cuda.find(arch);
    if (it == spec.compat.arch_min_cuda.end() || !(cell.cuda.toolkit < it->second)) cell.archs.push_back(arch);
  }
  cell.archs_from = cell.archs.size() == package.default_archs.size()
                        ? fmt::format("{} default", package.name)
                        : fmt::format("{} default, less what CUDA {} cannot build", package.name, cell.cuda.toolkit.str());
}

// A ROCm cell's GPU_ARCHS: the matrix's rocm_archs, else the package's default.
void resolve_rocm_archs(Cell& cell, const MatrixSpec& spec) {
  if (!cell.rocm()) return;
  cell.rocm_archs = spec.rocm_archs.empty() ? cell.package->default_rocm_archs : spec.rocm_archs;
}

// The switches the cell's profile turns off: the matrix's definition of that name, else the
// package's own. Throws for a name neither knows, or a switch the package does not have.
void resolve_profile(Cell& cell, const MatrixSpec& spec) {
  if (cell.profile == kDefaultProfile) return;
  const PackagePreset& package = *cell.package;
  Location where = cell.origin.known() ? cell.origin : Location{spec.file, 0, 0};
  for (const auto& p : spec.profiles) {
    if (p.value == cell.profile && p.where.line > 0 && !cell.origin.known()) where = p.where;
  }
  if (const auto it = spec.profile_defs.find(cell.profile); it != spec.profile_defs.end()) {
    cell.disabled = it->second.disable;
    where = it->second.where;
  } else if (const auto own = package.profiles.find(cell.profile); own != package.profiles.end()) {
    cell.disabled = own->second;
  } else {
    std::vector<std::string> known = {std::string(kDefaultProfile)};
    for (const auto& [name, _] : package.profiles) known.push_back(name);
    for (const auto& [name, _] : spec.profile_defs) known.push_back(name);
    throw config_error(where, fmt::format("unknown profile '{}' for {}{}", cell.profile, package.name,
                                          did_you_mean(cell.profile, known)),
                       fmt::format("profiles: {}; define others under profiles: (docs/packages.md)", join(known)));
  }
  const auto& allowed = package.switches.known;
  for (const auto& sw : cell.disabled) {
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), sw) == allowed.end()) {
      throw config_error(where, fmt::format("profile '{}' turns off {}, which {} does not have{}", cell.profile, sw,
                                            package.name, did_you_mean(sw, allowed)),
                         fmt::format("{}'s switches: {}", package.name, join(allowed)));
    }
  }
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

void warn_unknown_torch(const MatrixSpec& spec, std::vector<std::string>& warnings) {
  for (const auto& t : spec.torch) {
    const Version series = *Version::parse(t.value.series());
    if (spec.compat.cuda_builds(series) == nullptr || spec.compat.python_range(series) == nullptr) {
      warnings.push_back(fmt::format(
          "{}: torch {} is not in the compatibility tables; its cells are kept unchecked (add it under compat: "
          "torch_cuda and torch_python)",
          t.where.str(), series.str()));
    }
  }
}

}  // namespace

Expansion expand(const MatrixSpec& spec) {
  Expansion out;
  out.warnings = spec.warnings;
  warn_unknown_torch(spec, out.warnings);

  std::vector<Cell> cells = cross_product(spec);
  std::erase_if(cells, [&](const Cell& c) {
    return std::any_of(spec.exclude.begin(), spec.exclude.end(), [&](const MatrixEntry& e) { return entry_matches(c, e); });
  });
  cells = apply_include(spec, std::move(cells));
  cells = collapse_abi3(std::move(cells), out.notes);

  std::map<std::string, Location> ids;
  for (auto& cell : cells) {
    resolve_archs(cell, spec);
    resolve_rocm_archs(cell, spec);
    resolve_profile(cell, spec);
    resolve_patches(cell, spec);
    auto reasons = drop_reasons(cell, spec.compat);
    if (!reasons.empty()) {
      out.dropped.push_back({std::move(cell), std::move(reasons)});
      continue;
    }
    const std::string id = cell.id();
    if (const auto [it, fresh] = ids.emplace(id, cell.origin); !fresh) {
      throw config_error(cell.origin.known() ? cell.origin : Location{spec.file, 0, 0},
                         fmt::format("two cells would build the same wheel: {}", id),
                         "two values of one axis resolve to the same build (cuda 12.8 and {toolkit: \"12.9\", "
                         "torch_cuda: \"12.8\"}, or cxx11_abi auto and the ABI it means); keep one of them");
    }
    out.cells.push_back(std::move(cell));
  }
  return out;
}

}  // namespace fabuild
