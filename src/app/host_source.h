#pragma once

// The source tree each package version builds from, made ready once per run: a directory of
// the matrix's (`source: {path: ...}`) or an sdist (`source: {sdist: FILE-or-URL, sha256: ...}`),
// downloaded into fabuild's cache when it is a URL and unpacked there with the archive checks
// of source/archive.h.

#include <filesystem>
#include <map>
#include <string>

#include "app/plan.h"
#include "util/expected.h"

namespace fabuild {

class HostSources {
 public:
  explicit HostSources(const Plan& plan);
  // The tree for the cell's package version, or what is wrong and what to do. An empty path
  // means `source: pip` or `git`: the cell fetches the source itself.
  Expected<std::filesystem::path> tree_for(const Cell& cell);

 private:
  Expected<std::filesystem::path> make_tree(const Cell& cell);

  const Plan& plan_;
  std::map<std::string, Expected<std::filesystem::path>> trees_;  // by package, version and source
};

}  // namespace fabuild
