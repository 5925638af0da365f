#include "app/torch_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/error.h"
#include "util/text.h"
#include "wheel/manifest.h"

namespace fabuild {

// What a stable-ABI cell's wheel is verified under, and the plan's word on its window.
void plan_sweep(Plan& plan, const PlannedCell& p, const TorchResolution& torch, const Expansion::Served& served) {
  const Cell& cell = p.cell;
  std::vector<TorchRelease>& sweep = plan.sweeps[p.id] = sweep_of(cell, torch);
  const auto& stable = *cell.package->stable;
  std::vector<Version> all;
  for (const auto& s : served.series) all.push_back(*Version::parse(s));
  std::vector<std::string> why_not;
  for (const auto& [series, why] : served.not_built) {
    all.push_back(*Version::parse(series));
    why_not.push_back(fmt::format("not {}: {}", series, why));
  }
  std::sort(all.begin(), all.end());
  std::vector<std::string> names;
  for (const Version& v : all) names.push_back(v.str());
  std::string note = fmt::format(
      "{}: one stable-ABI wheel for torch {} and later (TORCH_TARGET_VERSION at {}) stands for the matrix's torch "
      "{}; built against torch {} ({}), the oldest of them it can be built against{}{}",
      p.id, cell.stable_floor->str(), stable.where, join(names, ", "), cell.torch.str(), cu_tag(cell.wheel_cuda()),
      stable.from == stable.floor ? "" : fmt::format(" (its setup.py builds stably from {})", stable.from.str()),
      why_not.empty() ? "" : " (" + join(why_not, "; ") + ")");
  if (!torch.failed.empty()) {
    note += fmt::format("; verified under that torch only: the torch index ({}) could not be asked: {}", torch.index,
                        torch.failed);
  } else {
    note += fmt::format("; verified under torch {}", describe_releases(sweep, cell.python));
  }
  plan.notes.push_back(std::move(note));
}

// --verify-torch: the releases a filed wheel of the cell is checked under, and a warning for each
// series the index has no build of its CUDA major of.
void plan_verify(Plan& plan, const PlannedCell& p, const TorchResolution& torch,
                 const std::vector<std::string>& series) {
  const Cell& cell = p.cell;
  if (cell.library() || !cell.command().empty()) return;
  std::vector<std::string> normal;
  for (const auto& s : series) normal.push_back(Version::parse(trim(s))->str());
  std::vector<std::string> missing;
  plan.sweeps[p.id] = releases_for(cell, torch, normal, missing);
  if (missing.empty()) return;
  plan.warnings.push_back(
      torch.failed.empty()
          ? fmt::format("{}: {} has no torch {} build of CUDA {}; its wheel is not checked under {}", p.id, torch.index,
                        join(missing, ", "), cell.wheel_cuda().major(), missing.size() == 1 ? "it" : "them")
          : fmt::format("{}: not checked under torch {}: the torch index ({}) could not be asked: {}", p.id,
                        join(missing, ", "), torch.index, torch.failed));
}

void note_filed_checks(Plan& plan) {
  const Expected<std::map<std::string, FiledWheel>> manifest = read_manifest(plan.wheelhouse);
  if (!manifest) return;  // the build says what is wrong with it
  for (const auto& [id, sweep] : plan.sweeps) {
    const auto filed = manifest->find(id);
    if (filed == manifest->end()) continue;
    std::vector<std::string> missing;
    for (const TorchRelease& t : sweep) {
      const std::string series = t.version.series();
      const auto& proofs = filed->second.torch_proofs;
      if (std::none_of(proofs.begin(), proofs.end(), [&](const auto& p) { return p.series == series; }))
        missing.push_back(series);
    }
    const std::vector<std::string> proven = proven_series(filed->second);
    plan.pending_checks[id] = missing;
    plan.notes.push_back(fmt::format("{}: filed ({}), proven under torch {}; {}", id, filed->second.wheel,
                                     proven.empty() ? std::string("none") : join(proven, ", "),
                                     missing.empty()
                                         ? std::string("nothing new to check")
                                         : fmt::format("to check under torch {} (no compile)", join(missing, ", "))));
  }
}

}  // namespace fabuild
