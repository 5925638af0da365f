#pragma once

// What the torch index has, asked when the plan is made (docs/stable-abi.md): a matrix's torch
// ranges (`torch: ">=2.10"`) become the series the index has, so that a nightly finds a torch
// published yesterday with no edit; and each stable-ABI cell gets the torch releases its one
// wheel is verified under: every one of its window that the index has a build of its CUDA major.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app/system.h"
#include "matrix/cell.h"
#include "matrix/spec.h"
#include "provision/torch_releases.h"

namespace fabuild {

struct TorchResolution {
  bool asked = false;  // the index was asked (the matrix has a range or stable-ABI cells)
  std::string index;   // what was asked, in words: "pip's configured index", a URL, a directory
  std::string failed;  // why it could not be asked; "" when it answered
  std::map<Platform, std::vector<TorchRelease>> releases;  // what it has, oldest first
  // Each range as written (">=2.10", ">=2.10,<2.14") with the series it stands for, oldest first.
  std::vector<std::pair<std::string, std::vector<std::string>>> ranges;
  std::set<std::string> named;      // the series the matrix names itself ("2.11")
  std::vector<TorchRange> windows;  // its ranges
};

// Asks the index when the matrix names a torch range or its package builds against torch's
// stable ABI; resolves the ranges into spec.torch (each series the index has from the range's
// floor on, at the range's place) and tells the compatibility tables which CUDA build each
// release the index has is (what pip will install beats the built-in table). Throws a UserError
// (exit 2) for a range when the index cannot be asked.
// `also_from`: ask the index for releases from this one on even when the matrix has no range or
// stable-ABI cell (--verify-torch).
TorchResolution resolve_torch(MatrixSpec& spec, const System& system,
                              const std::optional<Version>& also_from = std::nullopt);

// What resolve_torch does with the index's answer (r.releases, or r.failed): the ranges into
// spec.torch, the CUDA builds into its tables.
void apply_releases(MatrixSpec& spec, TorchResolution& r);

// The releases a stable-ABI cell's wheel is verified under: those the index has of its platform
// and CUDA major from its floor on, that the matrix asks for (its ranges, or the series it
// names), newest patch of each series; the torch it is built against always. Each is checked
// with the cell's Python, or the matrix's newest where the release has no wheel for the cell's
// (TorchRelease::python). Empty for a cell that is not stable-ABI.
std::vector<TorchRelease> sweep_of(const Cell& cell, const TorchResolution& torch);

// The index's release of each of `series` with the cell's CUDA major (its own CUDA build first),
// for --verify-torch; `missing` gets the series it has none of.
std::vector<TorchRelease> releases_for(const Cell& cell, const TorchResolution& torch,
                                       const std::vector<std::string>& series, std::vector<std::string>& missing);

// A warning for each range that holds no release the index has (">=2.99"): a typo, or a floor
// not published yet; the run goes on without it.
std::vector<std::string> empty_ranges(const TorchResolution& torch);

// "2.11 (cu130), 2.12 (cu130), 2.15 (cu132)"; a release checked with another Python than
// `python`: "2.15 (cu132, with cp313)".
std::string describe_releases(const std::vector<TorchRelease>& releases,
                              const std::optional<PythonTag>& python = std::nullopt);

}  // namespace fabuild
