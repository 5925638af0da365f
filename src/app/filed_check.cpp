#include "app/filed_check.h"

#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "app/exports_step.h"
#include "util/text.h"
#include "wheel/manifest.h"
#include "wheel/verify.h"

namespace fabuild {

namespace fs = std::filesystem;

CellOutcome settled(const PlannedCell& p, CellResult result, const std::string& step, const std::string& message) {
  CellOutcome out;
  out.id = p.id;
  out.result = result;
  out.step = step;
  out.message = message;
  out.status.code = result == CellResult::kFailed ? 1 : 0;
  return out;
}

std::vector<std::string> required_members(const Cell& cell) { return {extension_pattern(cell)}; }

namespace {

// Whether the patches a cell was filed with are the ones it has now (with a note if not).
bool same_patches(const PlannedCell& p, const FiledWheel& filed, const fs::path& file,
                  std::vector<std::string>& notes) {
  std::map<std::string, std::string> patches;
  for (const PatchFile& patch : p.patches) patches[patch.name] = patch.sha256;
  if (filed.patches == patches) return true;
  notes.push_back(fmt::format("{}: building again: its patches changed since {} was built", p.id, file.string()));
  return false;
}

}  // namespace

std::optional<CellOutcome> library_filed_and_intact(const PlannedCell& p, const std::string& wheelhouse,
                                                    const std::map<std::string, FiledWheel>& manifest,
                                                    std::vector<std::string>& notes) {
  const auto entry = manifest.find(p.id);
  if (entry == manifest.end()) return std::nullopt;
  const FiledWheel* const filed = &entry->second;
  const fs::path archive = fs::path(wheelhouse) / filed->wheel;
  if (!filed->library || !same_patches(p, *filed, archive, notes)) return std::nullopt;
  const FiledState state = check_filed(wheelhouse, *filed);
  if (state != FiledState::kIntact) {
    notes.push_back(fmt::format("{}: building again: its filed library {} {}", p.id, archive.string(),
                                state == FiledState::kMissing ? "is gone" : "changed since it was filed"));
    return std::nullopt;
  }
  CellOutcome out = settled(p, CellResult::kUpToDate, "", "");
  out.output_dir = archive.parent_path().string();
  return out;
}

std::optional<CellOutcome> filed_and_intact(const PlannedCell& p, const std::string& wheelhouse,
                                            const std::map<std::string, FiledWheel>& manifest, VerifiedStamps& stamps,
                                            std::vector<std::string>& notes) {
  const auto entry = manifest.find(p.id);
  if (entry == manifest.end()) return std::nullopt;
  const FiledWheel* const filed = &entry->second;
  const fs::path wheel = fs::path(wheelhouse) / filed->wheel;
  if (filed->library || !same_patches(p, *filed, wheel, notes)) return std::nullopt;
  const WheelExpectation expected = expectation_for(p.cell, required_members(p.cell));
  const auto up_to_date = [&] {
    CellOutcome out = settled(p, CellResult::kUpToDate, "", "");
    out.output_dir = wheel.parent_path().string();
    return out;
  };
  if (stamps.fresh(p.id, *filed, expected)) return up_to_date();  // verified before, and the same file since
  const FiledState state = check_filed(wheelhouse, *filed);
  if (state != FiledState::kIntact) {
    notes.push_back(fmt::format("{}: building again: its filed wheel {} {}", p.id, wheel.string(),
                                state == FiledState::kMissing ? "is gone" : "changed since it was filed"));
    return std::nullopt;
  }
  const WheelVerdict verdict = verify_wheel(wheel, expected);
  if (!verdict.ok()) {
    notes.push_back(
        fmt::format("{}: building again: its filed wheel no longer verifies: {}", p.id, join(verdict.problems, "; ")));
    return std::nullopt;
  }
  stamps.stamp(p.id, *filed, expected);
  return up_to_date();
}

}  // namespace fabuild
