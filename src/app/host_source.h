#pragma once

// The source tree each package version builds from, made ready once per run: a directory of
// the matrix's (`source: {path: ...}`) or an sdist (`source: {sdist: FILE-or-URL, sha256: ...}`),
// downloaded into fabuild's cache when it is a URL and unpacked there with the archive checks
// of source/archive.h.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "app/plan.h"

namespace fabuild {

class HostSources {
 public:
  explicit HostSources(const Plan& plan);
  // The tree for the cell's package version, or nullopt with `error` saying what to do. An
  // empty path means `source: pip` or `git`: the cell fetches the source itself.
  std::optional<std::filesystem::path> tree_for(const Cell& cell, std::string& error);

 private:
  std::optional<std::filesystem::path> make_tree(const Cell& cell, std::string& error);

  const Plan& plan_;
  std::map<std::string, std::pair<std::optional<std::filesystem::path>, std::string>> trees_;  // by version
};

}  // namespace fabuild
