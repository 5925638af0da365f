#include "matrix/rules.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/text.h"

namespace fabuild {

namespace {

std::string cu_list(const std::vector<Version>& builds) {
  std::vector<std::string> tags;
  for (const auto& b : builds) tags.push_back(cu_tag(b));
  return join(tags);
}

// The first torch series in the tables with a build of this CUDA major.
std::optional<Version> first_torch_with_major(const CompatTables& compat, int major) {
  for (const auto& [series, builds] : compat.torch_cuda) {
    for (const auto& b : builds) {
      if (b.major() == major) return series;
    }
  }
  return std::nullopt;
}

std::string rocm_list(const std::vector<Version>& builds) {
  std::vector<std::string> tags;
  for (const auto& b : builds) tags.push_back(rocm_index_tag(b));
  return join(tags);
}

void check_torch_rocm(const Cell& cell, const CompatTables& compat, std::vector<std::string>& reasons) {
  const auto* builds = compat.rocm_builds(cell.torch_series());
  if (builds == nullptr || cell.torch_cuda) return;
  reasons.push_back(fmt::format("torch {} has no ROCm {}.{} build (builds: {})", cell.torch_series().str(),
                                cell.cuda.toolkit.major(), cell.cuda.toolkit.minor(),
                                builds->empty() ? std::string("none") : rocm_list(*builds)));
}

void check_rocm_cell(const Cell& cell, std::vector<std::string>& reasons) {
  if (cell.package->default_rocm_archs.empty() && cell.package->rocm_archs.empty()) {
    reasons.push_back(fmt::format("{} does not build for ROCm", cell.package->name));
  }
  if (cell.platform != Platform::kLinuxX86_64) {
    reasons.push_back(fmt::format("ROCm builds are linux_x86_64 only, not {}", to_string(cell.platform)));
  }
}

void check_torch_cuda(const Cell& cell, const CompatTables& compat, std::vector<std::string>& reasons) {
  if (cell.rocm()) {
    check_torch_rocm(cell, compat, reasons);
    return;
  }
  const Version series = cell.torch_series();
  const auto* builds = compat.cuda_builds(series);
  if (builds == nullptr || cell.torch_cuda) return;
  if (cell.cuda.torch_cuda) {
    reasons.push_back(fmt::format("torch {} has no {} build (builds: {})", series.str(), cu_tag(*cell.cuda.torch_cuda),
                                  cu_list(*builds)));
    return;
  }
  const int major = cell.cuda.toolkit.major();
  std::string reason = fmt::format("torch {} has no CUDA {} build not newer than {} (builds: {})", series.str(), major,
                                   cell.cuda.toolkit.str(), cu_list(*builds));
  if (const auto first = first_torch_with_major(compat, major); first && series < *first) {
    reason += fmt::format("; CUDA {} needs torch >= {}", major, first->str());
  }
  reasons.push_back(reason);
}

// Without torch_index, pip installs PyPI's torch, which is one CUDA build per series. A
// command cell installs nothing through fabuild.
void check_pypi_build(const Cell& cell, const CompatTables& compat, TorchFrom from, std::vector<std::string>& reasons) {
  if (from != TorchFrom::kPipIndex || cell.rocm() || !cell.torch_cuda || !cell.command().empty()) return;
  const auto pypi = compat.pypi_cuda(cell.torch_series());
  if (!pypi || *pypi == *cell.torch_cuda) return;
  reasons.push_back(fmt::format(
      "pip's index has torch {} as a {} build (PyPI's) and no {}; set torch_index to a "
      "PyTorch-style index with {} builds, or pick CUDA {}",
      cell.torch_series().str(), cu_tag(*pypi), cu_tag(*cell.torch_cuda), cu_tag(*cell.torch_cuda), pypi->str()));
}

void check_toolkit_source(const Cell& cell, std::vector<std::string>& reasons) {
  if (cell.rocm() || cell.provision != Provision::kHost || cell.toolkit_source() != ToolkitSource::kPip ||
      !cell.command().empty()) {
    return;
  }
  if (!pip_has_cuda_compiler(cell.cuda.toolkit)) {
    reasons.push_back(
        fmt::format("toolkit: pip, but PyPI has no CUDA {} compiler (its {}.x packages carry ptxas "
                    "only); use a host toolkit (toolkit: auto or host) or provision: container",
                    cell.cuda.toolkit.str(), cell.cuda.toolkit.major()));
  }
}

// `range`: compat.python_range of the cell's torch series.
void check_python(const Cell& cell, const CompatTables::PythonRange* range, const CompatTables& compat,
                  std::vector<std::string>& reasons) {
  if (range == nullptr) return;
  const PythonTag release = cell.python.release();
  if (release < range->min || range->max < release) {
    reasons.push_back(fmt::format("torch {} ships for Python {} to {}, not {}", cell.torch_series().str(),
                                  range->min.dotted(), range->max.dotted(), release.dotted()));
    return;
  }
  if (!cell.python.free_threaded) return;
  const auto ft = compat.torch_free_threaded.find(cell.torch_series());
  if (ft == compat.torch_free_threaded.end()) {
    std::vector<std::string> with;
    for (const auto& [series, range] : compat.torch_free_threaded) {
      if (!(release < range.min) && !(range.max < release)) with.push_back(series.str());
    }
    reasons.push_back(fmt::format("torch {} has no free-threaded wheels for Python {} (compat.torch_free_threaded){}",
                                  cell.torch_series().str(), cell.python.dotted(),
                                  with.empty() ? std::string("; no torch series in the tables has")
                                               : "; torch " + join(with) + " ha" + (with.size() == 1 ? "s" : "ve")));
  } else if (release < ft->second.min || ft->second.max < release) {
    const auto& [min, max] = ft->second;
    reasons.push_back(fmt::format(
        "torch {} ships free-threaded wheels for Python {}, not {}", cell.torch_series().str(),
        min == max ? min.dotted() + "t only" : min.dotted() + "t to " + max.dotted() + "t", cell.python.dotted()));
  }
}

void check_min_torch(const Cell& cell, const CompatTables& compat, std::vector<std::string>& reasons) {
  const auto min = compat.min_torch(cell.version);
  if (min && cell.torch < *min) {
    reasons.push_back(fmt::format("{} {} needs torch >= {}", cell.package->name, cell.version.str(), min->str()));
  }
}

void check_archs(const Cell& cell, const CompatTables& compat, std::vector<std::string>& reasons) {
  if (cell.rocm()) return;
  std::vector<std::string> too_new;
  Version needed = cell.cuda.toolkit;
  for (int arch : cell.archs()) {
    const auto it = compat.arch_min_cuda.find(arch);
    if (it != compat.arch_min_cuda.end() && cell.cuda.toolkit < it->second) {
      too_new.push_back(std::to_string(arch));
      needed = std::max(needed, it->second);
    }
  }
  if (!too_new.empty()) {
    reasons.push_back(fmt::format("arch {} needs CUDA >= {}, this cell compiles with {} (set archs per CUDA set)",
                                  join(too_new, ";"), needed.str(), cell.cuda.toolkit.str()));
  }
}

// The archs this release's setup.py knows: another release's (sm_110 before FlashAttention
// 2.8.4) would be skipped without a word, and a release that reads no arch list builds its own.
void check_release_archs(const Cell& cell, std::vector<std::string>& reasons) {
  if (cell.rocm() || !cell.command().empty()) return;
  // Read in place, and the message made only for a cell it drops: a plan reads 100 000 cells.
  const ArchEra* era = release_era(*cell.package, cell.version);
  const ArchList& known = era != nullptr ? era->known : cell.package->known_archs;
  const auto name = [&] { return fmt::format("{} {}", cell.package->name, cell.version.str()); };
  if (era != nullptr && !era->selectable) {
    if (cell.archs() != era->defaults) {
      reasons.push_back(
          fmt::format("{}'s setup.py reads no arch list and always builds {}; build {} or a release "
                      "that reads {}",
                      name(), to_string(era->defaults), to_string(era->defaults), cell.package->archs_env));
    }
    return;
  }
  std::vector<int> unknown;
  for (int arch : cell.archs()) {
    if (std::find(known.begin(), known.end(), arch) == known.end()) unknown.push_back(arch);
  }
  if (!unknown.empty()) {
    reasons.push_back(
        fmt::format("{}'s setup.py knows archs {} and would skip {}; name archs without {} for it "
                    "(an include with version: \"{}\" and archs:)",
                    name(), to_string(known), to_string(unknown), to_string(unknown), cell.version.str()));
  }
}

// The series' CUDA build with `abi` for a cell whose own build has the other one: the same
// major as the toolkit, newest not newer than it, else the newest of that major.
std::optional<Version> build_with_abi(const Cell& cell, const CompatTables& compat, Abi abi) {
  const auto* builds = compat.cuda_builds(cell.torch_series());
  if (builds == nullptr) return std::nullopt;
  std::optional<Version> best;
  std::optional<Version> newer;
  for (const auto& b : *builds) {
    if (b.major() != cell.cuda.toolkit.major() || compat.torch_abi_of(cell.torch_series(), b, cell.platform) != abi)
      continue;
    auto& slot = cell.cuda.toolkit < b ? newer : best;
    if (!slot || *slot < b) slot = b;
  }
  return best ? best : newer;
}

void check_abi(const Cell& cell, const CompatTables& compat, std::vector<std::string>& reasons) {
  if (cell.platform == Platform::kWinAmd64) {
    if (cell.abi == Abi::kTrue) reasons.push_back("the C++11 ABI is a libstdc++ switch; win_amd64 builds use MSVC");
    return;
  }
  // A package's setup.py can force the C++11 ABI on (FLASH_ATTENTION_FORCE_CXX11_ABI), never
  // off: a FALSE wheel takes torch's ABI, so its torch build must have the old one.
  if (cell.abi != Abi::kFalse || cell.torch_abi != Abi::kTrue) return;
  const Version series = cell.torch_series();
  const auto other = build_with_abi(cell, compat, Abi::kFalse);
  if (!other || !cell.torch_cuda) {
    reasons.push_back(
        fmt::format("torch {} wheels for {} use the C++11 ABI only; a cxx11abiFALSE build would not import",
                    series.str(), to_string(cell.platform)));
    return;
  }
  reasons.push_back(fmt::format(
      "torch {}'s {} build uses the C++11 ABI, so a cxx11abiFALSE wheel cannot be built against it; its {} build "
      "has the old ABI: set compat.torch_build_for_abi: switch to build the FALSE wheels against it, or leave "
      "cxx11_abi FALSE out",
      series.str(), cu_tag(*cell.torch_cuda), cu_tag(*other)));
}

void check_abi3(const Cell& cell, std::vector<std::string>& reasons) {
  if (!cell.abi3()) return;
  if (cell.python.free_threaded) {
    reasons.push_back(fmt::format("python {}: {} builds a {}-abi3 wheel, and a free-threaded Python has no stable ABI",
                                  cell.python.str(), cell.package->name, cell.abi3_floor()));
    return;
  }
  const PythonTag floor = *PythonTag::parse(cell.abi3_floor());
  if (cell.python < floor) {
    reasons.push_back(fmt::format("python {}: {} builds a {}-abi3 wheel, which needs Python >= {}", cell.python.str(),
                                  cell.package->name, cell.abi3_floor(), floor.dotted()));
  }
}

void check_platform(const Cell& cell, std::vector<std::string>& reasons) {
  if (cell.platform == Platform::kWinAmd64 && cell.provision == Provision::kContainer) {
    reasons.push_back("win_amd64 wheels are built on a Windows host (provision: host), not in a Linux container");
  }
}

}  // namespace

Abi default_abi(const Cell& cell, const CompatTables& compat) {
  if (cell.platform == Platform::kWinAmd64) return Abi::kFalse;
  if (cell.rocm() || !cell.torch_cuda) return cell.torch_series() < compat.cxx11_abi_from ? Abi::kFalse : Abi::kTrue;
  return compat.torch_abi_of(cell.torch_series(), cell.torch_cuda, cell.platform);
}

std::optional<Version> pick_torch_cuda(const Cell& cell, const CompatTables& compat) {
  if (cell.rocm()) {
    // torch's ROCm build of the same major.minor (6.2 -> 6.2.4 for torch 2.6).
    const auto* builds = compat.rocm_builds(cell.torch_series());
    if (builds == nullptr) return cell.cuda.toolkit;
    for (const auto& b : *builds) {
      if (b.major() == cell.cuda.toolkit.major() && b.minor() == cell.cuda.toolkit.minor()) return b;
    }
    return std::nullopt;
  }
  const auto* builds = compat.cuda_builds(cell.torch_series());
  if (cell.cuda.torch_cuda) {
    if (builds == nullptr) return cell.cuda.torch_cuda;
    for (const auto& b : *builds) {
      if (b == *cell.cuda.torch_cuda) return b;
    }
    return std::nullopt;
  }
  if (builds == nullptr) return cell.cuda.toolkit;
  std::optional<Version> best;
  for (const auto& b : *builds) {
    if (b.major() == cell.cuda.toolkit.major() && !(cell.cuda.toolkit < b) && (!best || *best < b)) best = b;
  }
  return best;
}

void resolve(Cell& cell, const CompatTables& compat) {
  cell.torch_cuda = pick_torch_cuda(cell, compat);
  resolve_abi(cell, compat);
}

void resolve_abi(Cell& cell, const CompatTables& compat) {
  cell.default_abi = default_abi(cell, compat);
  if (cell.abi == Abi::kAuto) cell.abi = cell.default_abi;
  if (cell.platform == Platform::kWinAmd64 || cell.rocm()) return;
  cell.torch_abi = compat.torch_abi_of(cell.torch_series(), cell.torch_cuda, cell.platform);
  // Only a FALSE wheel needs torch's ABI: TRUE is forced through the package's switch.
  if (cell.abi == Abi::kFalse && cell.torch_abi == Abi::kTrue && compat.switch_torch_build_for_abi &&
      !cell.cuda.torch_cuda && cell.torch_cuda) {
    if (const auto other = build_with_abi(cell, compat, Abi::kFalse)) {
      cell.torch_cuda = other;
      cell.torch_abi = Abi::kFalse;
    }
  }
}

namespace {

// The checks of what a row's cells share, in drop_reasons' order: those before the Python's
// and those after it.
void check_row_first(const Cell& cell, const CompatTables& compat, TorchFrom torch_from,
                     std::vector<std::string>& reasons) {
  check_torch_cuda(cell, compat, reasons);
  check_pypi_build(cell, compat, torch_from, reasons);
  check_toolkit_source(cell, reasons);
}

void check_row_then(const Cell& cell, const CompatTables& compat, std::vector<std::string>& reasons) {
  check_min_torch(cell, compat, reasons);
  check_archs(cell, compat, reasons);
  check_release_archs(cell, reasons);
}

void check_cell_rest(const Cell& cell, const CompatTables& compat, std::vector<std::string>& reasons) {
  check_abi(cell, compat, reasons);
  check_platform(cell, reasons);
  if (cell.rocm()) check_rocm_cell(cell, reasons);
  check_abi3(cell, reasons);
}

// What the row checks read of a cell: cells equal in all of it get the same row reasons.
bool same_row(const Cell& a, const Cell& b) {
  return a.package == b.package && a.setup == b.setup && a.provision == b.provision &&
         a.cuda.backend == b.cuda.backend && a.version == b.version && a.torch == b.torch &&
         a.cuda.toolkit == b.cuda.toolkit && a.cuda.torch_cuda == b.cuda.torch_cuda && a.torch_cuda == b.torch_cuda;
}

}  // namespace

std::vector<std::string> drop_reasons(const Cell& cell, const CompatTables& compat, TorchFrom torch_from) {
  std::vector<std::string> reasons;
  check_row_first(cell, compat, torch_from, reasons);
  check_python(cell, compat.python_range(cell.torch_series()), compat, reasons);
  check_row_then(cell, compat, reasons);
  check_cell_rest(cell, compat, reasons);
  return reasons;
}

struct DropRules::Row {
  Cell cell;  // the first cell of the row: what the next ones are compared with
  std::vector<std::string> first;
  std::vector<std::string> then;
  const CompatTables::PythonRange* python_range = nullptr;
};

std::vector<std::string> DropRules::reasons(const Cell& cell) {
  if (!row_ || !same_row(row_->cell, cell)) {
    auto row = std::make_shared<Row>(Row{cell, {}, {}, compat_.python_range(cell.torch_series())});
    check_row_first(cell, compat_, torch_from_, row->first);
    check_row_then(cell, compat_, row->then);
    row_ = std::move(row);
  }
  std::vector<std::string> reasons = row_->first;
  check_python(cell, row_->python_range, compat_, reasons);
  reasons.insert(reasons.end(), row_->then.begin(), row_->then.end());
  check_cell_rest(cell, compat_, reasons);
  return reasons;
}

}  // namespace fabuild

namespace fabuild {

std::vector<std::string> library_drop_reasons(const Cell& cell, const CompatTables& compat) {
  std::vector<std::string> reasons;
  if (cell.rocm()) {
    reasons.push_back("the library recipe builds CUDA kernels with nvcc; a ROCm set has no library (build its wheels)");
    return reasons;
  }
  if (cell.platform == Platform::kWinAmd64) {
    reasons.push_back("library cells are built on Linux so far; win_amd64 has wheels only");
  }
  check_toolkit_source(cell, reasons);
  check_archs(cell, compat, reasons);
  return reasons;
}

}  // namespace fabuild
