// When two cells would file one wheel (or library): the same build spelled twice is one cell,
// two different builds are an error; and an abi3 package's Python axis is one wheel
// (docs/matrix.md, "Collapse").

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "matrix/expand_parts.h"
#include "matrix/stable_cells.h"
#include "util/text.h"

namespace fabuild::expansion {

namespace {

// What an abi3 cell shares with the cells it collapses with: every axis but Python.
using Abi3Key =
    std::tuple<std::string, Version, Version, Version, Backend, std::optional<Version>, Platform, Abi, std::string>;
Abi3Key abi3_key(const Cell& c) {
  return {c.package->name,   c.version,  c.torch, c.cuda.toolkit, c.cuda.backend,
          c.cuda.torch_cuda, c.platform, c.abi,   c.profile};
}

std::string describe_gpu_set(const Cell& cell) {
  return cell.rocm() ? "rocm " + cell.cuda.toolkit.str() : "cuda " + spell_gpu_set(cell.cuda);
}

bool same_source(const std::optional<SourceSpec>& s, const std::optional<SourceSpec>& t) {
  if (!s || !t) return !s && !t;
  return s->kind == t->kind && s->location == t->location && s->ref == t->ref && s->sha256 == t->sha256;
}

// What sets two cells of one id apart beyond how their GPU set was spelled (cuda 12.8, and 12.9
// resolved to torch's cu128 build; cxx11_abi auto and the ABI it means), `later` against `kept`.
std::vector<std::string> differences(const Cell& kept, const Cell& later) {
  const CellSetup& x = *kept.setup;
  const CellSetup& y = *later.setup;
  std::vector<std::string> out;
  if (kept.package != later.package) out.push_back("package " + later.package->name + " against " + kept.package->name);
  if (kept.patches != later.patches) out.push_back("patches");
  if (x.archs != y.archs) out.push_back(fmt::format("archs {} against {}", to_string(y.archs), to_string(x.archs)));
  if (x.rocm_archs != y.rocm_archs) out.push_back("ROCm archs");
  if (x.disabled != y.disabled) out.push_back("switches");
  if (x.env != y.env) out.push_back("env");
  if (x.command != y.command) out.push_back("command");
  if (x.toolkit != y.toolkit) out.push_back("toolkit " + to_string(y.toolkit) + " against " + to_string(x.toolkit));
  if (!same_source(x.source, y.source)) out.push_back("source");
  return out;
}

// Where a cell's settings come from: the include that added it or named its archs, else the
// matrix's axes (unknown).
Location entry_where(const Cell& cell) { return cell.origin().known() ? cell.origin() : cell.setup->archs_where; }

std::string entry_of(const Cell& cell) {
  const Location where = entry_where(cell);
  return where.known() ? fmt::format("the include at line {}", where.line) : "the matrix's axes";
}

// Throws for two different builds of one file; true when they differ only in archs that follow
// each one's GPU set (the package default trimmed to what its toolkit builds, or archs per CUDA
// set): a natural matrix, not two intents.
bool check_one_build(const Cell& kept, const Cell& later, const std::string& id, const MatrixSpec& spec) {
  const std::vector<std::string> apart = differences(kept, later);
  const bool archs_of_gpu_sets = apart.size() == 1 && apart.front().starts_with("archs ") &&
                                 !kept.setup->archs_where.known() && !later.setup->archs_where.known();
  const std::string artifact = to_string(later.artifact);
  if (!apart.empty() && !archs_of_gpu_sets) {
    Location where = entry_where(later);
    if (!where.known()) where = entry_where(kept);
    if (!where.known()) where = Location{spec.file, 0, 0};
    throw config_error(where,
                       fmt::format("two different builds would file the same {}: {} ({})", artifact, id, join(apart)),
                       fmt::format("{} and {} give it different settings; give one of them other axis values, or "
                                   "the same settings",
                                   entry_of(later), entry_of(kept)));
  }
  return archs_of_gpu_sets;
}

}  // namespace

std::string collapse_note(const Cell& kept, const Cell& later, const std::string& id, const MatrixSpec& spec,
                          bool strict) {
  const bool archs_of_gpu_sets = check_one_build(kept, later, id, spec);
  const std::string artifact = to_string(later.artifact);
  // The dropped cell's id is the kept one's: how each was spelled tells them apart, their torch
  // pins (2.8.0 and 2.8.1 file one torch2.8 wheel) or else their GPU sets.
  // Compared as spelled: Version equates 2.11 and 2.11.0, a series and a pin in it.
  const bool pins = kept.torch.str() != later.torch.str() && !later.library();
  const std::string later_is = pins ? "torch " + later.torch.str() : describe_gpu_set(later);
  std::string reason = fmt::format("builds the same {} as {} ({}), which is kept", artifact, id,
                                   pins ? "torch " + kept.torch.str() : describe_gpu_set(kept));
  if (archs_of_gpu_sets) {
    reason += fmt::format(" (its own archs would be {}, the kept one's are {})", to_string(later.archs()),
                          to_string(kept.archs()));
  }
  if (strict) {
    const std::string what = later.library() || pins ? "" : " for torch " + later.torch.str();
    throw config_error(later.origin().known() ? later.origin() : Location{spec.file, 0, 0},
                       fmt::format("{}{} {}", later_is, what, reason),
                       "--strict refuses cells that collapse into another; without it they are dropped "
                       "with a note, or exclude the pair in the matrix");
  }
  return later_is + " " + reason;
}

void collapse_stable(Cell& kept, Cell& later, const std::string& id, const MatrixSpec& spec,
                     std::map<std::string, std::vector<Version>>& served) {
  check_one_build(kept, later, id, spec);
  auto& series = served[id];
  if (series.empty()) series.push_back(kept.torch);
  series.push_back(later.torch);
  // Built against the oldest torch of the window that the matrix has: its headers are the
  // floor's nearest, and any later torch loads what they compile.
  if (later.torch < kept.torch) std::swap(kept, later);
}

std::map<std::string, Expansion::Served> stable_served(const std::vector<Cell>& cells,
                                                       const std::vector<std::string>& ids,
                                                       std::map<std::string, std::vector<Version>> served) {
  std::map<std::string, Expansion::Served> out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (!cells[i].stable()) continue;
    auto& series = served[ids[i]];
    if (series.empty()) series.push_back(cells[i].torch);
    std::sort(series.begin(), series.end());
    auto& one = out[ids[i]];
    for (const Version& v : series) one.series.push_back(v.str());
  }
  return out;
}

namespace {

// The switches a cell's profile turns off, as the resolver will set them: the matrix's own
// definition of the name, else the package's (an unknown profile is the resolver's error).
std::vector<std::string> profile_switches(const Cell& cell, const MatrixSpec& spec) {
  if (const auto it = spec.profile_defs.find(cell.profile); it != spec.profile_defs.end()) return it->second.disable;
  const auto& own = profiles_of(*cell.package, cell.artifact);
  const auto it = own.find(cell.profile);
  return it == own.end() ? std::vector<std::string>() : it->second;
}

}  // namespace

void mark_stable(const MatrixSpec& spec, std::vector<Cell>& cells, std::vector<std::string>& notes) {
  if (spec.stable_abi == StableMode::kNo) return;
  std::set<std::string> said;  // profiles already noted
  for (Cell& cell : cells) {
    if (cell.library() || (!cell.package->stable && spec.stable_abi != StableMode::kYes)) continue;
    const StableVerdict v = stable_verdict(cell, profile_switches(cell, spec), spec.stable_abi);
    if (v.can) {
      cell.stable_floor = cell.package->stable->floor;
      continue;
    }
    if (spec.stable_abi == StableMode::kYes) {
      throw config_error(spec.stable_abi_where.known() ? spec.stable_abi_where : Location{spec.file, 0, 0},
                         fmt::format("{} cannot be built against torch's stable ABI: {}", cell.id(), v.why),
                         "stable_abi: true asks it of every wheel cell; exclude that cell, or set stable_abi: auto "
                         "to build it per torch series");
    }
    if (v.profile_keeps && said.insert(cell.profile).second)
      notes.push_back(fmt::format("profile {}: one wheel per torch series: {}", cell.profile, v.why));
  }
}

void merge_dropped_windows(std::vector<DroppedCell>& dropped) {
  std::map<std::string, std::size_t> first;  // a stable-ABI cell's id -> its entry
  std::vector<DroppedCell> out;
  for (DroppedCell& d : dropped) {
    if (!d.cell.stable()) {
      out.push_back(std::move(d));
      continue;
    }
    const auto [at, fresh] = first.try_emplace(d.cell.id(), out.size());
    if (fresh) {
      out.push_back(std::move(d));
      continue;
    }
    std::vector<std::string>& reasons = out[at->second].reasons;
    for (std::string& r : d.reasons) {
      if (std::find(reasons.begin(), reasons.end(), r) == reasons.end()) reasons.push_back(std::move(r));
    }
  }
  dropped = std::move(out);
}

// An abi3 package's cells that differ only in their Python tag become one, built with the
// lowest of them from the package's floor up (cp310: a cp39 cell has no abi3 wheel).
std::vector<Cell> collapse_abi3(std::vector<Cell> cells, std::vector<std::string>& notes) {
  std::vector<Cell> out;
  out.reserve(cells.size());
  std::map<Abi3Key, std::size_t> collapsed;  // -> its cell in `out`: no search of `out` for each cell
  for (auto& cell : cells) {
    if (!cell.abi3()) {
      out.push_back(std::move(cell));
      continue;
    }
    // Below the floor there is no abi3 wheel: the cell stays alone, and the rules drop it saying
    // so (rules.cpp, check_abi3), rather than the wheel claiming to serve its Python.
    if (cell.python < *PythonTag::parse(cell.abi3_floor())) {
      out.push_back(std::move(cell));
      continue;
    }
    const auto [it, fresh] = collapsed.emplace(abi3_key(cell), out.size());
    if (fresh) {
      if (cell.abi3_pythons.empty()) cell.abi3_pythons = {cell.python};
      out.push_back(std::move(cell));
      continue;
    }
    Cell& same = out[it->second];
    same.abi3_pythons.push_back(cell.python);
    if (cell.python < same.python) same.python = cell.python;
  }
  std::set<std::string> said;  // a stable-ABI cell's id stands for the window's series: noted once
  for (const auto& cell : out) {
    if (!cell.abi3() || cell.abi3_pythons.size() < 2 || !said.insert(cell.id()).second) continue;
    std::vector<std::string> tags;
    for (const auto& t : cell.abi3_pythons) tags.push_back(t.str());
    notes.push_back(fmt::format("{}: one {}-abi3 wheel serves python {} (built with {})", cell.id(), cell.abi3_floor(),
                                join(tags, ", "), cell.python.str()));
  }
  return out;
}

}  // namespace fabuild::expansion
