#pragma once

// wheelhouse/index.html: the matrix as a grid a person can filter ("cu130 cp312"), each cell
// built (size, sha256, build time, a pip line to copy), failed (with a link to its log) or not
// built; the indexes; and a timeline of the last run. One static file, no external assets.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "publish/catalog.h"
#include "publish/grid.h"
#include "publish/run_record.h"
#include "publish/simple_index.h"

namespace fabuild {

struct PageInput {
  const Grid* grid = nullptr;
  const Catalog* catalog = nullptr;
  const std::vector<IndexTree>* trees = nullptr;
  const RunRecord* run = nullptr;  // the last run, when there is a record of one
  std::string base_url;            // "" lets the page use the place it is opened from
  std::vector<std::string> files;  // report.json, summary.md, manifest.json: those that exist
};

std::string render_page(const PageInput& in);

// "3.1 MiB".
std::string human_size(std::uint64_t bytes);

// "glibc ≥ 2.28 · GLIBCXX_3.4.21" of a wheel's recorded needs (FiledWheel::needs); "" when none
// are known.
std::string needs_note(const std::map<std::string, std::string>& needs);

}  // namespace fabuild
