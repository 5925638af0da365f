#pragma once

// PEP 503 simple indexes over a wheelhouse, as static files that work from any static host and
// from file:// because every link is relative:
//
//   simple/index.html                      every project
//   simple/<project>/index.html            every wheel, with #sha256=, data-requires-python,
//                                          data-dist-info-metadata and data-core-metadata (PEP 658/714)
//   <cuXYZ>/torch<series>/simple/...       the same for one variant: pip pointed at it picks the
//                                          wheel for its own Python from that CUDA x torch set only
//
// Each file is replaced whole (written, then renamed); pages of projects or variants that no
// longer have wheels are removed.

#include <filesystem>
#include <string>
#include <vector>

#include "publish/catalog.h"

namespace fabuild {

struct IndexTree {
  std::string root;                   // "" for the main index, "cu128/torch2.8" for a variant
  std::vector<std::string> projects;  // normalised names, sorted
};

// Writes the main index and one per variant; returns them, the main one first. `strict` (a
// directory fabuild adopted, `fabuild index --adopt`): a page or tree without fabuild's generator
// mark is never removed.
std::vector<IndexTree> write_simple_indexes(const std::filesystem::path& wheelhouse, const Catalog& catalog,
                                            bool strict = false);

// The index pages write_simple_indexes writes for `catalog`, relative to the wheelhouse.
std::vector<std::string> index_pages(const Catalog& catalog);

// Whether a page carries fabuild's mark (<meta name="generator" content="fabuild">).
bool written_by_fabuild(const std::filesystem::path& page);

// The page simple/<project>/index.html of `tree_root` for `wheels` (all of one project).
std::string project_page(const std::string& project, const std::string& tree_root,
                         const std::vector<const CatalogWheel*>& wheels);

}  // namespace fabuild
