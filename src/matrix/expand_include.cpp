// Include entries: the cells each extends, or the one it adds (docs/matrix.md, "Include").

#include <algorithm>

#include <fmt/format.h>

#include "matrix/axes.h"
#include "matrix/expand_parts.h"
#include "matrix/match.h"
#include "matrix/rules.h"
#include "util/text.h"

namespace fabuild::expansion {

std::shared_ptr<const CellSetup> matrix_setup(const MatrixSpec& spec, const Location& origin) {
  CellSetup setup;
  setup.env = spec.env;
  setup.command = spec.command;
  setup.build = spec.build;
  setup.toolkit = spec.toolkit;
  setup.origin = origin;
  return std::make_shared<const CellSetup>(std::move(setup));
}

Provision library_provision(const MatrixSpec& spec) {
  return spec.provision_where.known() ? spec.provision : Provision::kHost;
}

Cell base_cell(const MatrixSpec& spec, std::shared_ptr<const CellSetup> setup) {
  Cell c;
  c.package = spec.package;
  c.provision = spec.provision;
  c.setup = std::move(setup);
  return c;
}

namespace {

// What an include's settings make of a setup.
std::shared_ptr<const CellSetup> with_settings(const CellSetup& setup, const CellSettings& s) {
  auto out = std::make_shared<CellSetup>(setup);
  if (s.archs) {
    out->archs = s.archs->value;
    out->archs_from = "include at line " + std::to_string(s.archs->where.line);
    out->archs_where = s.archs->where;
  }
  if (!s.command.empty()) out->command = s.command;
  for (const auto& [k, v] : s.env) out->env[k] = v;
  if (s.build.max_jobs) out->build.max_jobs = s.build.max_jobs;
  if (s.build.nvcc_threads) out->build.nvcc_threads = s.build.nvcc_threads;
  if (s.build.memory_per_thread_gb) out->build.memory_per_thread_gb = s.build.memory_per_thread_gb;
  if (s.build.timeout_s) out->build.timeout_s = s.build.timeout_s;
  if (s.build.kill_grace_s) out->build.kill_grace_s = s.build.kill_grace_s;
  if (s.build.type) out->build.type = s.build.type;
  if (s.source) out->source = s.source;
  if (s.toolkit) out->toolkit = *s.toolkit;
  return out;
}

// One include entry's settings, applied to the cells it extends. Cells that shared a setup
// share the one it makes of it, instead of a copy each.
class Extension {
 public:
  explicit Extension(const CellSettings& settings) : settings_(settings) {}

  void apply(Cell& cell) {
    if (settings_.provision) cell.provision = *settings_.provision;
    auto& [before, after] = made_[cell.setup.get()];
    if (!after) {
      before = cell.setup;  // held, so that no other setup takes its address while this lives
      after = with_settings(*cell.setup, settings_);
    }
    cell.setup = after;
  }

 private:
  const CellSettings& settings_;
  std::map<const CellSetup*, std::pair<std::shared_ptr<const CellSetup>, std::shared_ptr<const CellSetup>>> made_;
};

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
  Cell cell = base_cell(spec, matrix_setup(spec, entry.where));
  std::vector<std::string> missing;
  if (const auto* m = find_axis(entry, Axis::kPackage); m && m->values.front() != spec.package->name) {
    cell.package = find_preset(m->values.front());
    if (find_axis(entry, Axis::kVersion) == nullptr) {
      throw config_error(entry.where,
                         fmt::format("this include adds {} cells but names no version", cell.package->name),
                         fmt::format("add version: (the matrix's versions are {}'s)", spec.package->name));
    }
  }
  if (const auto* m = find_axis(entry, Axis::kTorch); m && m->values.front().starts_with(">=")) {
    throw config_error(
        m->where,
        fmt::format("this include matches no cell, and adds none for the torch window {}: a "
                    "window's cells come from the matrix's torch:",
                    m->values.front()),
        fmt::format("write \"{}\" in the matrix's torch: list, or name one torch series here", m->values.front()));
  }
  for (const AxisRow& row : axis_rows()) {
    if (row.axis == Axis::kPackage) continue;  // taken above
    const AxisMatch* named = find_axis(entry, row.axis);
    if (cell.library() && row.wheel_only) {  // complete without torch, Python and ABI
      if (named != nullptr) {
        throw config_error(entry.where, fmt::format("this include adds a library cell, which has no {}", row.key),
                           "a library is built once per version, CUDA set, platform and profile; leave out torch, "
                           "python and cxx11_abi, or say artifact: wheel");
      }
      continue;
    }
    if (row.axis == Axis::kPython && named == nullptr && cell.abi3() && !spec.python.empty()) {
      // Its one wheel serves every Python of the matrix; the lowest from the floor up builds it.
      const PythonTag floor = *PythonTag::parse(cell.abi3_floor());
      cell.python = spec.python.front().value;
      for (const auto& p : spec.python) {
        cell.abi3_pythons.push_back(p.value);
        if (!(p.value < floor) && (p.value < cell.python || cell.python < floor)) cell.python = p.value;
      }
    } else if (named != nullptr) {
      row.set(cell, named->values.front());
    } else if (!row.from_matrix(cell, spec)) {
      missing.emplace_back(row.key);
    }
  }
  if (cell.library()) cell.provision = library_provision(spec);
  if (!missing.empty()) {
    throw config_error(entry.where,
                       fmt::format("this include matches no cell, and cannot add one: it does not say which {} "
                                   "(the matrix lists several)",
                                   join(missing, ", ")),
                       "to extend cells, use values the matrix has; to add a cell, name every axis that has "
                       "more than one value");
  }
  if (!cell.library()) resolve(cell, spec.compat);
  return cell;
}

bool same_axes(const Cell& a, const Cell& b) {
  return a.package->name == b.package->name && a.artifact == b.artifact && a.version == b.version &&
         a.torch == b.torch && a.cuda.toolkit == b.cuda.toolkit && a.cuda.backend == b.cuda.backend &&
         a.cuda.torch_cuda == b.cuda.torch_cuda && a.python == b.python && a.platform == b.platform && a.abi == b.abi &&
         a.profile == b.profile;
}

}  // namespace

// What an include cannot give a library cell: a container (library cells build on the host for
// now) or a command (it replaces the wheel build; a library cell builds the recipe).
void check_library_settings(const MatrixEntry& entry, const Cell& cell) {
  if (!cell.library()) return;
  if (entry.settings.provision == Provision::kContainer) {
    throw config_error(entry.where,
                       "library cells build on the host; provision: container is not supported for them yet",
                       "give this include artifact: wheel, or provision: host for the library cells");
  }
  if (!entry.settings.command.empty()) {
    throw config_error(entry.where, "command: replaces the wheel build, and library cells build the library recipe",
                       "give this include artifact: wheel");
  }
}

std::vector<Cell> apply_include(const MatrixSpec& spec, std::vector<Cell> cells) {
  const std::size_t original = cells.size();
  for (const auto& entry : spec.include) {
    bool extended = false;
    Extension extension(entry.settings);
    // GitHub Actions semantics: an include extends the original combinations it agrees with;
    // cells added by earlier includes are not extended.
    for (std::size_t i = 0; i < original; ++i) {
      if (entry_matches(cells[i], entry)) {
        check_library_settings(entry, cells[i]);
        extension.apply(cells[i]);
        extended = true;
      }
    }
    if (extended) continue;
    Cell cell = new_cell(spec, entry);
    check_library_settings(entry, cell);
    // Two includes that name the same new cell describe one cell, not two.
    const auto same = std::find_if(cells.begin() + static_cast<std::ptrdiff_t>(original), cells.end(),
                                   [&](const Cell& added) { return same_axes(added, cell); });
    if (same != cells.end()) {
      extension.apply(*same);
    } else {
      extension.apply(cell);
      cells.push_back(std::move(cell));
    }
  }
  return cells;
}

}  // namespace fabuild::expansion
