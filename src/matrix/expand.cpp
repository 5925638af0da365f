#include "matrix/expand.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "matrix/axes.h"
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
  std::vector<std::size_t> sizes = {spec.versions.size(),  spec.torch.size(), spec.cuda.size(),    spec.python.size(),
                                    spec.platforms.size(), spec.abis.size(),  spec.profiles.size()};
  for (const auto& values : spec.declared) sizes.push_back(values.size());
  for (const std::size_t size : sizes) n = size == 0 ? 0 : std::min(kCap, n * std::min(kCap, size));
  return n;
}

// Every combination of the declared axes' values (matrix/axes.h), in the table's order: one
// empty combination when the matrix has no declared axis, or each has one value and it is the
// fallback (its cells then hold none).
std::vector<std::vector<std::string>> declared_combinations(const MatrixSpec& spec) {
  std::vector<std::vector<std::string>> combos{{}};
  bool all_fallback = true;
  for (std::size_t i = 0; i < spec.declared.size(); ++i) {
    const auto& values = spec.declared[i];
    all_fallback = all_fallback && values.size() == 1 && values.front().value == declared_axes().at(i)->fallback;
    std::vector<std::vector<std::string>> next;
    for (const auto& combo : combos) {
      for (const auto& v : values) {
        next.push_back(combo);
        next.back().push_back(v.value);
      }
    }
    combos = std::move(next);
  }
  if (all_fallback) return {{}};
  return combos;
}

// The setup of each combination's cells: the matrix's, with the combination's values. The
// cells of one combination share it, as the cells of a matrix without one share the matrix's.
std::vector<std::shared_ptr<const CellSetup>> declared_setups(const MatrixSpec& spec,
                                                              const std::shared_ptr<const CellSetup>& base) {
  std::vector<std::shared_ptr<const CellSetup>> setups;
  for (auto& combo : declared_combinations(spec)) {
    if (combo.empty()) {
      setups.push_back(base);
      continue;
    }
    auto setup = std::make_shared<CellSetup>(*base);
    setup->declared = std::move(combo);
    setups.push_back(std::move(setup));
  }
  return setups;
}

// The most cells a matrix may expand to: a plan of 100 000 cells takes well under a second and
// its memory (bench/overheads.cpp plans 100 080); millions are a typo or a hostile file, and
// would exhaust memory before anything is built.
constexpr double kMostCells = 250000;

bool has_artifact(const MatrixSpec& spec, Artifact artifact);

// Refuses a matrix whose axes multiply past kMostCells before a cell is made, naming them.
void check_size(const MatrixSpec& spec) {
  const bool wheels = has_artifact(spec, Artifact::kWheel);
  const bool libraries = has_artifact(spec, Artifact::kLibrary);
  double n = 0;
  std::vector<std::string> factors;
  const auto axis = [&](std::string_view name, std::size_t size) {
    factors.push_back(fmt::format("{} {}", size, name));
    return static_cast<double>(size);
  };
  double product = 0;
  if (wheels) {
    product = axis("versions", spec.versions.size()) * axis("torch", spec.torch.size()) *
              axis("cuda", spec.cuda.size()) * axis("python", spec.python.size()) *
              axis("platform", spec.platforms.size()) * axis("cxx11_abi", spec.abis.size()) *
              axis("profile", spec.profiles.size());
  }
  double declared = 1;  // a declared axis the matrix does not multiply by is not named
  for (std::size_t i = 0; i < spec.declared.size(); ++i) {
    if (spec.declared[i].size() != 1) declared *= axis(declared_axes().at(i)->key, spec.declared[i].size());
  }
  n += product * declared;
  if (libraries) {
    n += static_cast<double>(spec.versions.size() * spec.cuda.size() * spec.platforms.size() * spec.profiles.size()) *
         declared;
  }
  n += static_cast<double>(spec.include.size());
  if (n <= kMostCells) return;
  throw config_error(Location{spec.file, 0, 0},
                     fmt::format("the matrix would make {:.0f} cells, more than fabuild plans ({:.0f}): {}", n,
                                 kMostCells, join(factors, " x ")),
                     "narrow its axes, or split it into several matrix files");
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
  const auto setups = declared_setups(spec, cell.setup);
  for (const auto& v : spec.versions)
    for (const auto& c : spec.cuda)
      for (const auto& pl : spec.platforms)
        for (const auto& pr : spec.profiles)
          for (const auto& setup : setups) {
            cell.version = v.value;
            cell.cuda = c.value;
            cell.platform = pl.value;
            cell.profile = pr.value;
            cell.setup = setup;
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
  const auto setups = declared_setups(spec, row.setup);
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
              for (const auto& pr : spec.profiles)
                for (const auto& setup : setups) {
                  Cell& cell = cells.emplace_back(row);
                  cell.python = p.value;
                  cell.platform = pl.value;
                  cell.abi = a.value;
                  cell.profile = pr.value;
                  if (setup != row.setup) cell.setup = setup;
                  resolve_abi(cell, spec.compat);
                }
      }
  if (has_artifact(spec, Artifact::kLibrary)) add_library_cells(spec, cells);
  return cells;
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

// A CUDA set newer than every CUDA of its major that the tables know (torch's builds, PyPI's),
// or of a major they do not know, is a typo far more often than a release the tables have not
// caught up with (13.7, 12.80): refused here rather than after minutes of installing a toolkit
// that does not exist. A new release is added under compat: torch_cuda.
void check_known_cuda(const MatrixSpec& spec) {
  std::set<Version> known;
  for (const auto& [series, builds] : spec.compat.torch_cuda) known.insert(builds.begin(), builds.end());
  for (const auto& [series, build] : spec.compat.torch_pypi_cuda) known.insert(build);
  const auto newest_of = [&](int major) {
    std::optional<Version> newest;
    for (const Version& v : known) {
      if (v.major() == major) newest = v;
    }
    return newest;
  };
  for (const auto& set : spec.cuda) {
    if (set.value.backend != Backend::kCuda) continue;
    for (const std::optional<Version>& v : {std::optional<Version>(set.value.toolkit), set.value.torch_cuda}) {
      if (!v) continue;
      const auto newest = newest_of(v->major());
      const Version minor = *Version::parse(fmt::format("{}.{}", v->major(), v->minor()));
      if (newest && !(*newest < minor)) continue;
      std::vector<std::string> names;
      for (const Version& k : known) names.push_back(k.str());
      throw config_error(set.where,
                         fmt::format("CUDA {} is {} than any CUDA the compatibility tables know ({})", v->str(),
                                     newest ? "newer" : "of another major", join(names, ", ")),
                         newest ? fmt::format("pick one of those (the newest CUDA {} is {}); a newer release goes "
                                              "under compat: torch_cuda with the torch series that have builds for it",
                                              v->major(), newest->str())
                                : "pick one of those; a new release goes under compat: torch_cuda with the torch "
                                  "series that have builds for it");
    }
  }
}

// Where each of the `kept` cells came from: the positions in the matrix that `dropped_from`
// (ascending) does not hold.
std::vector<std::size_t> kept_from(const std::vector<std::size_t>& dropped_from, std::size_t kept) {
  std::vector<std::size_t> from;
  from.reserve(kept);
  auto dropped = dropped_from.begin();
  for (std::size_t i = 0; from.size() < kept; ++i) {
    if (dropped != dropped_from.end() && *dropped == i) {
      ++dropped;
    } else {
      from.push_back(i);
    }
  }
  return from;
}

// Puts `dropped` in the order of where each came from (`from`: their positions in the matrix,
// one each).
void order_by(std::vector<DroppedCell>& dropped, const std::vector<std::size_t>& from) {
  std::vector<std::size_t> order(dropped.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return from[a] < from[b]; });
  std::vector<DroppedCell> sorted;
  sorted.reserve(dropped.size());
  for (const std::size_t k : order) sorted.push_back(std::move(dropped[k]));
  dropped = std::move(sorted);
}

}  // namespace

Expansion expand(const MatrixSpec& spec, const ExpandOptions& options) {
  Expansion out;
  out.warnings = spec.warnings;
  check_size(spec);
  warn_unknown_torch(spec, out.warnings);
  check_known_cuda(spec);

  std::vector<Cell> cells = cross_product(spec);
  std::erase_if(cells, [&](const Cell& c) {
    return std::any_of(spec.exclude.begin(), spec.exclude.end(),
                       [&](const MatrixEntry& e) { return entry_matches(c, e); });
  });
  const std::size_t product = cells.size();
  cells = expansion::apply_include(spec, std::move(cells));
  check_library_cells(spec, cells);
  expansion::mark_stable(spec, cells, out.notes);
  // The product's cells are the matrix's package (an include extends them with settings, and
  // adds its own cells after them): only the added ones need looking at, not 100 000.
  const bool abi3 = (product > 0 && (!spec.package->abi3.empty() || spec.package->stable)) ||
                    std::any_of(cells.begin() + static_cast<std::ptrdiff_t>(product), cells.end(),
                                [](const Cell& c) { return c.abi3(); });
  if (abi3) cells = expansion::collapse_abi3(std::move(cells), out.notes);

  // The buildable cells are moved to the front of `cells`, which becomes out.cells: a second
  // array of 100 000 cells would cost as much again in fresh memory. Where each dropped cell
  // came from keeps them in the matrix's order, whichever check dropped them.
  std::size_t kept = 0;
  std::vector<std::size_t> dropped_from;
  out.ids.reserve(cells.size());
  expansion::Resolver resolver(spec);
  DropRules rules(spec.compat, spec.torch_index.empty() ? TorchFrom::kPipIndex : TorchFrom::kTorchIndex);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    Cell& cell = cells[i];
    resolver.resolve(cell);
    auto reasons = cell.library() ? library_drop_reasons(cell, spec.compat) : rules.reasons(cell);
    if (!reasons.empty()) {
      out.dropped.push_back({std::move(cell), std::move(reasons)});
      dropped_from.push_back(i);
      continue;
    }
    out.ids.push_back(cell.id());
    if (kept != i) cells[kept] = std::move(cell);
    ++kept;
  }
  // Two cells with one id: the later is a collapse of the earlier (its stable-ABI window
  // grows), or it goes with a note; the earlier is kept where it is, the rest close up.
  const std::vector<RepeatedId> repeats = repeated_ids(out.ids);
  std::map<std::string, std::vector<Version>> served;  // a stable-ABI cell's id -> the torch series it stands for
  if (!repeats.empty()) {
    const std::vector<std::size_t> came_from = kept_from(dropped_from, kept);
    std::vector<std::size_t> now_at(kept);  // where the first of each id is after closing up
    std::size_t next_repeat = 0;
    std::size_t closed = 0;
    for (std::size_t j = 0; j < kept; ++j) {
      if (next_repeat < repeats.size() && repeats[next_repeat].index == j) {
        Cell& earlier = cells[now_at[repeats[next_repeat++].earlier]];
        Cell& cell = cells[j];
        if (cell.stable() && earlier.stable()) {  // one window, from another torch series
          expansion::collapse_stable(earlier, cell, out.ids[j], spec, served);
          continue;
        }
        // Throws for two different builds of one file, and under --strict for any collapse.
        std::string note = expansion::collapse_note(earlier, cell, out.ids[j], spec, options.strict);
        out.dropped.push_back({std::move(cell), {std::move(note)}});
        dropped_from.push_back(came_from[j]);
        continue;
      }
      now_at[j] = closed;
      if (closed != j) {
        cells[closed] = std::move(cells[j]);
        out.ids[closed] = std::move(out.ids[j]);
      }
      ++closed;
    }
    kept = closed;
    out.ids.resize(kept);
    order_by(out.dropped, dropped_from);
  }
  cells.erase(cells.begin() + static_cast<std::ptrdiff_t>(kept), cells.end());
  if (!served.empty() || std::any_of(cells.begin(), cells.end(), [](const Cell& c) { return c.stable(); })) {
    // A torch series the window cannot be built against (no build of its CUDA on the index) is
    // still served by it, verified against the releases the plan finds: not a dropped cell.
    out.stable = expansion::stable_served(cells, out.ids, std::move(served));
    std::erase_if(out.dropped, [&](const DroppedCell& d) {
      if (!d.cell.stable()) return false;
      const auto window = out.stable.find(d.cell.id());
      if (window == out.stable.end()) return false;
      window->second.not_built.emplace_back(d.cell.torch.str(), d.reasons.front());
      return true;
    });
  }
  if (std::any_of(out.dropped.begin(), out.dropped.end(), [](const DroppedCell& d) { return d.cell.stable(); }))
    expansion::merge_dropped_windows(out.dropped);
  out.cells = std::move(cells);
  return out;
}

}  // namespace fabuild
