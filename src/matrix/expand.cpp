#include "matrix/expand.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "matrix/expand_parts.h"
#include "matrix/id_index.h"
#include "matrix/match.h"
#include "matrix/rules.h"
#include "util/text.h"

namespace fabuild {

namespace {

// How many cells the axes multiply to, capped: what to reserve for them.
std::size_t product_size(const MatrixSpec& spec) {
  constexpr std::size_t kCap = std::size_t{1} << 20;
  std::size_t n = 1;
  for (const std::size_t size : {spec.versions.size(), spec.torch.size(), spec.cuda.size(), spec.python.size(),
                                 spec.platforms.size(), spec.abis.size(), spec.profiles.size()}) {
    n = size == 0 ? 0 : std::min(kCap, n * std::min(kCap, size));
  }
  return n;
}

bool has_artifact(const MatrixSpec& spec, Artifact artifact) {
  return std::any_of(spec.artifacts.begin(), spec.artifacts.end(),
                     [&](const Located<Artifact>& a) { return a.value == artifact; });
}

// The library cells: version x GPU set x platform x profile, after the wheels. A GPU set that
// names torch's CUDA build ("12.9/cu128") is its toolkit here: the same library as "12.9", kept
// once (same_build).
void add_library_cells(const MatrixSpec& spec, std::vector<Cell>& cells) {
  Cell cell = expansion::base_cell(spec, expansion::matrix_setup(spec));
  cell.artifact = Artifact::kLibrary;
  cell.provision = expansion::library_provision(spec);
  for (const auto& v : spec.versions)
    for (const auto& c : spec.cuda)
      for (const auto& pl : spec.platforms)
        for (const auto& pr : spec.profiles) {
          cell.version = v.value;
          cell.cuda = c.value;
          cell.platform = pl.value;
          cell.profile = pr.value;
          cells.push_back(cell);
        }
}

// What library cells cannot have after the includes: a package without a recipe, or a
// container the matrix's own provision: gave them.
void check_library_cells(const MatrixSpec& spec, const std::vector<Cell>& cells) {
  for (const Cell& cell : cells) {
    if (!cell.library()) continue;
    const Location where = cell.origin().known() ? cell.origin() : Location{spec.file, 0, 0};
    if (!cell.package->library) {
      throw config_error(where, fmt::format("{} has no library recipe", cell.package->name),
                         "artifact: library builds flash-attn, flash-attn-3 and flash-example (docs/library.md)");
    }
    if (cell.provision == Provision::kContainer) {
      throw config_error(spec.provision_where.known() ? spec.provision_where : where,
                         "library cells build on the host; provision: container is not supported for them yet",
                         "set provision: host, or keep the containers for the wheels: include: [{artifact: library, "
                         "provision: host}]");
    }
  }
}

std::vector<Cell> cross_product(const MatrixSpec& spec) {
  std::vector<Cell> cells;
  if (!has_artifact(spec, Artifact::kWheel)) {
    add_library_cells(spec, cells);
    return cells;
  }
  cells.reserve(product_size(spec));
  Cell row = expansion::base_cell(spec, expansion::matrix_setup(spec));
  for (const auto& v : spec.versions)
    for (const auto& t : spec.torch)
      for (const auto& c : spec.cuda) {
        // What a row of cells shares, torch's CUDA build included (pick_torch_cuda reads the
        // torch series and GPU set), is set once for its Pythons, platforms, ABIs and profiles.
        row.version = v.value;
        row.torch = t.value;
        row.cuda = c.value;
        row.torch_cuda = pick_torch_cuda(row, spec.compat);
        for (const auto& p : spec.python)
          for (const auto& pl : spec.platforms)
            for (const auto& a : spec.abis)
              for (const auto& pr : spec.profiles) {
                Cell& cell = cells.emplace_back(row);
                cell.python = p.value;
                cell.platform = pl.value;
                cell.abi = a.value;
                cell.profile = pr.value;
                resolve_abi(cell, spec.compat);
              }
      }
  if (has_artifact(spec, Artifact::kLibrary)) add_library_cells(spec, cells);
  return cells;
}

// What an abi3 cell shares with the cells it collapses with: every axis but Python.
using Abi3Key =
    std::tuple<std::string, Version, Version, Version, Backend, std::optional<Version>, Platform, Abi, std::string>;
Abi3Key abi3_key(const Cell& c) {
  return {c.package->name,   c.version,  c.torch, c.cuda.toolkit, c.cuda.backend,
          c.cuda.torch_cuda, c.platform, c.abi,   c.profile};
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
    if (cell.python < *PythonTag::parse(cell.package->abi3)) {
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
  for (const auto& cell : out) {
    if (!cell.abi3() || cell.abi3_pythons.size() < 2) continue;
    std::vector<std::string> tags;
    for (const auto& t : cell.abi3_pythons) tags.push_back(t.str());
    notes.push_back(fmt::format("{}: one {}-abi3 wheel serves python {} (built with {})", cell.id(), cell.package->abi3,
                                join(tags, ", "), cell.python.str()));
  }
  return out;
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

// Two cells with one id are one build when nothing but how their GPU set was spelled tells
// them apart (cuda 12.8, and 12.9 resolved to torch's cu128 build; cxx11_abi auto and the ABI
// it means): the later is dropped. Anything else is two builds claiming one file.
bool same_build(const Cell& a, const Cell& b) {
  const CellSetup& x = *a.setup;
  const CellSetup& y = *b.setup;
  const auto same_source = [](const std::optional<SourceSpec>& s, const std::optional<SourceSpec>& t) {
    if (!s || !t) return !s && !t;
    return s->kind == t->kind && s->location == t->location && s->ref == t->ref && s->sha256 == t->sha256;
  };
  return a.package == b.package && a.patches == b.patches && x.archs == y.archs && x.rocm_archs == y.rocm_archs &&
         x.disabled == y.disabled && x.env == y.env && x.command == y.command && x.toolkit == y.toolkit &&
         same_source(x.source, y.source);
}

std::string describe_gpu_set(const Cell& cell) {
  return cell.rocm() ? "rocm " + cell.cuda.toolkit.str() : "cuda " + spell_gpu_set(cell.cuda);
}

}  // namespace

Expansion expand(const MatrixSpec& spec, const ExpandOptions& options) {
  Expansion out;
  out.warnings = spec.warnings;
  warn_unknown_torch(spec, out.warnings);

  std::vector<Cell> cells = cross_product(spec);
  std::erase_if(cells, [&](const Cell& c) {
    return std::any_of(spec.exclude.begin(), spec.exclude.end(),
                       [&](const MatrixEntry& e) { return entry_matches(c, e); });
  });
  const std::size_t product = cells.size();
  cells = expansion::apply_include(spec, std::move(cells));
  check_library_cells(spec, cells);
  // The product's cells are the matrix's package (an include extends them with settings, and
  // adds its own cells after them): only the added ones need looking at, not 100 000.
  const bool abi3 =
      (product > 0 && !spec.package->abi3.empty()) || std::any_of(cells.begin() + static_cast<std::ptrdiff_t>(product),
                                                                  cells.end(), [](const Cell& c) { return c.abi3(); });
  if (abi3) cells = collapse_abi3(std::move(cells), out.notes);

  // The buildable cells are moved to the front of `cells`, which becomes out.cells: a second
  // array of 100 000 cells would cost as much again in fresh memory.
  std::size_t kept = 0;
  out.ids.reserve(cells.size());
  IdIndex ids(cells.size(), [&](std::size_t i) { return out.ids[i]; });
  expansion::Resolver resolver(spec);
  const TorchFrom torch_from = spec.torch_index.empty() ? TorchFrom::kPipIndex : TorchFrom::kTorchIndex;
  for (auto& cell : cells) {
    resolver.resolve(cell);
    auto reasons =
        cell.library() ? library_drop_reasons(cell, spec.compat) : drop_reasons(cell, spec.compat, torch_from);
    if (!reasons.empty()) {
      out.dropped.push_back({std::move(cell), std::move(reasons)});
      continue;
    }
    std::string id = cell.id();
    if (const auto earlier = ids.add(id, kept)) {
      const Cell& kept_cell = cells[*earlier];
      if (!same_build(kept_cell, cell)) {
        throw config_error(cell.origin().known() ? cell.origin() : Location{spec.file, 0, 0},
                           fmt::format("two different builds would file the same {}: {}", to_string(cell.artifact), id),
                           fmt::format("{} and this entry give it different settings (archs, env, command, source "
                                       "or patches); give one of them other axis values, or move the settings "
                                       "into one entry",
                                       kept_cell.origin().known() ? kept_cell.origin().str() : "the matrix's cells"));
      }
      const std::string reason = fmt::format("builds the same {} as {} ({}), which is kept", to_string(cell.artifact),
                                             id, describe_gpu_set(kept_cell));
      if (options.strict) {
        const std::string what = cell.library() ? "" : " for torch " + cell.torch.str();
        throw config_error(cell.origin().known() ? cell.origin() : Location{spec.file, 0, 0},
                           fmt::format("cuda {}{} {}", spell_gpu_set(cell.cuda), what, reason),
                           "--strict refuses cells that collapse into another; without it they are dropped "
                           "with a note, or exclude the pair in the matrix");
      }
      // The dropped cell's id is the kept one's: its CUDA set tells the two apart.
      std::string note = describe_gpu_set(cell) + " " + reason;
      out.dropped.push_back({std::move(cell), {std::move(note)}});
      continue;
    }
    if (&cells[kept] != &cell) cells[kept] = std::move(cell);
    out.ids.push_back(std::move(id));
    ++kept;
  }
  cells.erase(cells.begin() + static_cast<std::ptrdiff_t>(kept), cells.end());
  out.cells = std::move(cells);
  return out;
}

}  // namespace fabuild
