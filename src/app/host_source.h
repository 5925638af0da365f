#pragma once

// The source tree each package version builds from, made ready once per run: a directory of
// the matrix's (`source: {path: ...}`) or an sdist (`source: {sdist: FILE-or-URL, sha256: ...}`),
// downloaded into fabuild's cache when it is a URL and unpacked there with the archive checks
// of source/archive.h. An unpacked tree in the cache is made by one process at a time and held
// (util/entry_lock.h) for as long as the run goes on, so that no trim removes it meanwhile.

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/plan.h"
#include "util/entry_lock.h"
#include "util/expected.h"
#include "util/files.h"

namespace fabuild {

class HostSources {
 public:
  // `files` (System's) looks for setup.py, marks a cached tree used and removes one no cell can build.
  HostSources(const Plan& plan, Files& files);
  // The tree for the cell's package version, or what is wrong and what to do. An empty path
  // means `source: pip` or `git`: the cell fetches the source itself.
  Expected<std::filesystem::path> tree_for(const Cell& cell);
  // The holds on the cache's trees that the run uses, for the run to keep till it ends.
  std::vector<EntryUse> take_uses() { return std::exchange(uses_, {}); }

 private:
  Expected<std::filesystem::path> make_tree(const Cell& cell);

  const Plan& plan_;
  Files& files_;
  std::map<std::string, Expected<std::filesystem::path>> trees_;  // by package, version and source
  std::vector<EntryUse> uses_;
};

}  // namespace fabuild
