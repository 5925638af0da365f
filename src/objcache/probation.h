#pragma once

// Objects a row took from the remote tier that no build of the row has proven yet
// (docs/security.md, "Objects from the remote are on probation"): <dir>/probation/<row key>,
// one cache path per line ("results/ab/<hex>", "manifests/cd/<hex>"). A fetch adds what it
// wrote into the cache; a build of the row that passed its checks takes out what it used; a
// build that failed evicts every object of the row still on probation, so that neither its
// retry nor a later run without the remote uses them again. Read and rewritten under the
// directory's lock: the cells of a row and concurrent runs share the file.

#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "objcache/store.h"
#include "util/expected.h"

namespace fabuild::objcache {

class Probation {
 public:
  Probation(const Store& store, const std::string& row_key);

  // Puts the cache paths on probation (those listed already stay once). Each call below is a
  // Failure when the list's directory cannot be locked or the list cannot be written: the
  // objects then stay as they were (on probation, or not yet on it).
  [[nodiscard]] Expected<void> add(const std::vector<std::string>& paths) const;
  // What is on probation now.
  [[nodiscard]] std::vector<std::string> paths() const;
  // Takes `proven` off probation; returns how many stay on it.
  [[nodiscard]] Expected<std::size_t> prove(const std::set<std::string>& proven) const;
  // Removes every object on probation from the cache, and the list; returns the paths removed
  // (those still there).
  [[nodiscard]] Expected<std::vector<std::string>> evict() const;

  // A cache path as the list and the remote's index write it: "results/ab/<hex>".
  [[nodiscard]] std::string path_of(const std::filesystem::path& file) const;

 private:
  [[nodiscard]] std::vector<std::string> read() const;
  [[nodiscard]] Expected<void> write(const std::vector<std::string>& paths) const;
  const Store& store_;
  std::filesystem::path dir_;
  std::filesystem::path file_;
};

}  // namespace fabuild::objcache
