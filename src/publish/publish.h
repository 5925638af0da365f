#pragma once

// Publishing a wheelhouse: its simple indexes, its matrix page, and the record of the last run
// (report.json, summary.md). Everything is made again from what is on disk each time, so that
// `fabuild index` after any change (wheels copied in, CI shards merged, a wheel removed) gives
// the same result as the end of a build; each file is replaced whole.

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "publish/catalog.h"
#include "publish/run_record.h"
#include "publish/simple_index.h"
#include "wheel/manifest.h"

namespace fabuild {

inline constexpr const char* kPageName = "index.html";
inline constexpr const char* kSummaryName = "summary.md";

struct PublishOptions {
  // Absolute URL the wheelhouse is served from, for the page's pip lines; "" lets the page
  // use the place it is opened from.
  std::string base_url;
  // The wheelhouse's manifest when the caller has read it (a build, for its records); else it
  // is read here, once for the catalog and the page.
  const std::map<std::string, FiledWheel>* manifest = nullptr;
  // A directory that was not a fabuild wheelhouse (`fabuild index --adopt`): nothing fabuild did
  // not write is overwritten or removed; a page of its own name that is not its own refuses the
  // whole publish (exit 2) before anything is written.
  bool adopt = false;
};

struct Published {
  Catalog catalog;
  std::vector<IndexTree> trees;        // the main index first, then one per variant
  std::array<std::size_t, 3> cells{};  // built, failed, not built, as the page shows them
  bool has_run = false;                // a run record exists (report.json, summary.md)
  std::vector<std::string> warnings;   // e.g. a previous report that could not be read
};

// Refuses (UserError, exit 2) to adopt a directory where fabuild would replace a file it did not
// write: a page of its own name without fabuild's mark, a report or summary. Writes nothing and
// reads no wheel, so that `fabuild index --adopt` can refuse before anything is written, its lock
// included; publish_wheelhouse asks again under its lock.
void refuse_adopting(const std::filesystem::path& wheelhouse);

// With `run`, records it as report.json (cells of earlier runs that it does not have keep their
// last record) and summary.md; without, uses the report.json there is, if any. Then catalogs the
// wheels and writes the indexes and index.html, under a lock on the wheelhouse.
// Throws UserError: exit 2 when the wheelhouse is not a directory.
Published publish_wheelhouse(const std::filesystem::path& wheelhouse, std::optional<RunRecord> run,
                             const PublishOptions& options);

}  // namespace fabuild
