#pragma once

// The matrix as a person reads it: rows are package version x torch series (or "lib" and the
// profile, for library cells), columns CUDA x Python (or "lib"), and each cell of the grid holds
// the builds there (usually one; more when several
// platforms or ABIs share it), each built, failed or not built. Made from three sources that
// can disagree: the run record (what the last runs did), the manifest (what is filed, also by
// runs on other machines merged in), and the wheels actually on disk (what is published).

#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "publish/catalog.h"
#include "publish/run_record.h"
#include "wheel/manifest.h"

namespace fabuild {

enum class BuildState { kBuilt, kFailed, kNotBuilt };

struct GridEntry {
  std::string id;  // the cell id, or the wheel's file name when no cell names it
  BuildState state = BuildState::kNotBuilt;
  std::string status;                       // as recorded: "ok", "up to date", "failed", ..., "filed"
  std::string detail;                       // why it failed or was not built
  const CatalogWheel* wheel = nullptr;      // the published wheel, when there is one...
  const CatalogLibrary* library = nullptr;  // ...or a library cell's published archive
  double build_s = 0;                       // how long its build took; 0 when unknown
  int max_jobs = 0;
  int nvcc_threads = 0;
  std::string toolchain;
  std::string log;  // relative to the wheelhouse; "" when there is none on disk
  std::string platform;
  std::string run;  // the run that settled it, when it was an earlier one
  // What its wheel's ELF modules need of the system, as filed (FiledWheel::needs): "glibc" -> "2.28".
  std::map<std::string, std::string> needs;
  std::map<std::string, std::string> gpu_code;  // as filed: module -> "sm_90, PTX sm_90"
  // The torch releases its wheel was checked under, as filed (a stable-ABI wheel's sweep).
  std::string stable_floor;
  std::vector<FiledWheel::TorchProof> torch_proofs;
};

struct Grid {
  std::vector<std::string> rows;                                                  // "fa2.8.3/torch2.8"
  std::vector<std::string> columns;                                               // "cu128/cp312"
  std::map<std::pair<std::size_t, std::size_t>, std::vector<GridEntry>> entries;  // (row, column)
};

// What the manifest says a cell filed (the fields the grid uses).
struct FiledCell {
  std::string wheel;  // relative to the wheelhouse: a wheel, or a library cell's archive (library)
  double build_seconds = 0;
  std::string toolchain;                        // the image, when one built it
  std::map<std::string, std::string> versions;  // nvcc, compiler, python, torch
  std::map<std::string, std::string> needs;     // glibc, glibcxx; empty when unknown
  std::map<std::string, std::string> gpu_code;  // module -> its SASS and PTX archs; empty when not read
  bool library = false;
  std::string stable_floor;  // a stable-ABI wheel's window (docs/stable-abi.md)
  std::vector<FiledWheel::TorchProof> torch_proofs;
};

// What the page shows of each cell of manifest.json (wheel/manifest.h's read_manifest).
std::map<std::string, FiledCell> filed_cells(const std::map<std::string, FiledWheel>& manifest);

Grid make_grid(const std::filesystem::path& wheelhouse, const std::vector<CellRecord>& records,
               const std::map<std::string, FiledCell>& filed, const Catalog& catalog);

// Counts of entries by state: built, failed, not built.
std::array<std::size_t, 3> count_states(const Grid& grid);

}  // namespace fabuild
