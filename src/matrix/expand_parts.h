#pragma once

// The stages of expand() (expand.cpp) that have files of their own: include entries
// (expand_include.cpp), what each cell resolves to (expand_resolve.cpp), and cells that would
// file one wheel (expand_collapse.cpp). Internal to the matrix layer.

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "matrix/cell.h"
#include "matrix/expand.h"

namespace fabuild::expansion {

// The setup every cell of the matrix starts from; `origin` is the include entry that adds one.
std::shared_ptr<const CellSetup> matrix_setup(const MatrixSpec& spec, const Location& origin = {});
Cell base_cell(const MatrixSpec& spec, std::shared_ptr<const CellSetup> setup);
// Where library cells build unless an include says otherwise: the matrix's `provision:` when it
// names one (a container is refused for them: expand), else this host.
Provision library_provision(const MatrixSpec& spec);

// GitHub Actions semantics: each include extends the cells it agrees with, or adds one.
std::vector<Cell> apply_include(const MatrixSpec& spec, std::vector<Cell> cells);

// Resolves each cell's archs, ROCm archs and profile switches into its setup, and its patches.
// Those depend on the setup it had, its package, GPU set and profile only: cells that agree on
// these share the resolved setup, made once (a matrix of 100 000 cells has a handful).
class Resolver {
 public:
  explicit Resolver(const MatrixSpec& spec) : spec_(spec) {}
  // Throws a UserError for a profile the package does not know.
  void resolve(Cell& cell);

 private:
  // Setup, package, GPU backend, profile, and the toolkit with its count of release numbers:
  // equal keys are equally spelled toolkits (12.8 and 12.8.0 are equal versions), so that
  // they resolve alike even in the text.
  // ..., the toolkit and its number of parts, the first release of the package's arch era, and
  // the artifact (a library's profiles and switches may be its own).
  using Key = std::tuple<const CellSetup*, const PackagePreset*, Backend, std::string, Version, std::size_t,
                         const ArchEra*, Artifact>;
  using Made = std::pair<std::shared_ptr<const CellSetup>, std::shared_ptr<const CellSetup>>;  // before, after
  static Key key_of(const Cell& cell);
  [[nodiscard]] bool same_as_last(const Cell& cell) const;

  const MatrixSpec& spec_;
  std::map<Key, Made> made_;  // `before` held, so that no other setup takes its address meanwhile
  const std::pair<const Key, Made>* last_ = nullptr;  // consecutive cells mostly share one
};

// Marks the wheel cells that build one stable-ABI wheel for a torch window (Cell::stable_floor,
// matrix/stable_cells.h); under stable_abi: true a cell that cannot is an error (exit 2), and
// auto notes each profile that keeps its cells per torch series.
void mark_stable(const MatrixSpec& spec, std::vector<Cell>& cells, std::vector<std::string>& notes);

// Two stable-ABI cells of one id (the same window from two torch series): one build, kept
// against the older torch; `served` gathers the series each id stands for. Throws as
// collapse_note does for two different builds.
void collapse_stable(Cell& kept, Cell& later, const std::string& id, const MatrixSpec& spec,
                     std::map<std::string, std::vector<Version>>& served);
// What each stable-ABI cell of `cells` (ids[i] its id) stands for (Expansion::stable).
std::map<std::string, Expansion::Served> stable_served(const std::vector<Cell>& cells,
                                                       const std::vector<std::string>& ids,
                                                       std::map<std::string, std::vector<Version>> served);
// A stable-ABI cell dropped for each series of its window is one cell dropped, with each series'
// reason once, where the first was.
void merge_dropped_windows(std::vector<DroppedCell>& dropped);

// An abi3 package's cells that differ only in their Python tag become one (its notes say which
// Pythons it serves); a Python below the package's floor stays alone, for the rules to drop.
std::vector<Cell> collapse_abi3(std::vector<Cell> cells, std::vector<std::string>& notes);

// `later` would file what `kept` files (one id): the reason `later` is dropped, when the two are
// one build, or differ only in archs that follow each one's GPU set (the package default trimmed
// to its toolkit, archs per CUDA set). Throws a UserError (exit 2) for two different builds,
// naming what differs and the entries that set it, and under `strict` for any collapse.
std::string collapse_note(const Cell& kept, const Cell& later, const std::string& id, const MatrixSpec& spec,
                          bool strict);

}  // namespace fabuild::expansion
