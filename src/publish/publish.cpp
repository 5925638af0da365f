#include "publish/publish.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "publish/grid.h"
#include "publish/page.h"
#include "publish/summary.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text.h"
#include "wheel/build_record.h"
#include "wheel/manifest.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

// The digest, size and build record of each recorded wheel as published now.
void fill_from_catalog(std::vector<CellRecord>& cells, const Catalog& catalog) {
  struct AsPublished {
    std::string sha256;
    std::uint64_t size = 0;
    std::string build_record;
  };
  std::map<std::string, AsPublished> by_path;
  for (const auto& w : catalog.wheels)
    by_path[w.path] = {w.sha256, w.size, w.build_record ? w.path + kBuildRecordSuffix : ""};
  for (const auto& l : catalog.libraries) by_path[l.path] = {l.sha256, l.size, ""};
  for (auto& c : cells) {
    const auto it = by_path.find(c.wheel);
    if (it == by_path.end()) continue;
    c.sha256 = it->second.sha256;
    c.size = it->second.size;
    c.build_record = it->second.build_record;
  }
}

}  // namespace

void refuse_adopting(const fs::path& wheelhouse) {
  std::error_code ec;
  std::vector<std::string> foreign;
  const auto add = [&](const std::string& file) {
    if (std::find(foreign.begin(), foreign.end(), file) == foreign.end()) foreign.push_back(file);
  };
  if (fs::exists(wheelhouse / kPageName, ec) && !written_by_fabuild(wheelhouse / kPageName)) add(kPageName);
  for (const char* file : {kReportName, kSummaryName}) {
    if (fs::exists(wheelhouse / file, ec)) add(file);
  }
  // The index pages its wheels would make, known from their names before any is read.
  const Expected<std::map<std::string, FiledWheel>> manifest = read_manifest(wheelhouse);
  const Catalog named = catalog_by_name(wheelhouse, manifest.value_or(std::map<std::string, FiledWheel>()));
  for (const std::string& page : index_pages(named)) {
    if (fs::exists(wheelhouse / page, ec) && !written_by_fabuild(wheelhouse / page)) add(page);
  }
  if (foreign.empty()) return;
  constexpr std::size_t kNamed = 6;
  std::string listed =
      join(std::vector<std::string>(foreign.begin(), foreign.begin() + std::min(kNamed, foreign.size())));
  if (foreign.size() > kNamed) listed += fmt::format(" and {} more", foreign.size() - kNamed);
  throw config_error(Location{wheelhouse.string()},
                     fmt::format("{} {} not fabuild's, and fabuild would replace {}", listed,
                                 foreign.size() == 1 ? "is" : "are", foreign.size() == 1 ? "it" : "them"),
                     "fabuild index --adopt writes only its own files: move those aside, or index the wheels in a "
                     "directory of their own");
}

Published publish_wheelhouse(const fs::path& wheelhouse, std::optional<RunRecord> run, const PublishOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(wheelhouse, ec)) {
    throw config_error(
        Location{wheelhouse.string()},
        fs::exists(wheelhouse, ec) ? "the wheelhouse is not a directory" : "the wheelhouse does not exist",
        "give the directory fabuild built into (its -o or the matrix's wheelhouse:), e.g. fabuild index wheelhouse");
  }
  std::string base = options.base_url;
  if (!base.empty() && base.back() != '/') base += '/';

  DirLock lock(wheelhouse);
  if (options.adopt) refuse_adopting(wheelhouse);  // again: the directory may have changed meanwhile
  Published out;
  std::map<std::string, FiledWheel> read;
  if (options.manifest == nullptr) read = manifest_entries(wheelhouse);
  const std::map<std::string, FiledWheel>& manifest = options.manifest != nullptr ? *options.manifest : read;
  out.catalog = catalog_wheelhouse(wheelhouse, manifest);
  if (run) {
    Expected<std::optional<RunRecord>> read_previous = read_report(wheelhouse);
    if (!read_previous) {
      out.warnings.push_back(
          fmt::format("{}; the cells of earlier runs are not carried over", read_previous.error().what));
    }
    const std::optional<RunRecord> previous = read_previous ? std::move(*read_previous) : std::nullopt;
    run = with_torch_history(with_earlier(std::move(*run), previous), previous);
    fill_from_catalog(run->cells, out.catalog);
    write_file_atomically(wheelhouse / kReportName, report_json(*run));
  } else {
    Expected<std::optional<RunRecord>> read = read_report(wheelhouse);
    if (!read) throw user_error_of(read.error());
    run = std::move(*read);
  }
  out.has_run = run.has_value();
  if (run) write_file_atomically(wheelhouse / kSummaryName, summary_markdown(*run, wheelhouse.generic_string()));

  if (options.adopt) {
    for (const auto& page : index_pages(out.catalog)) {
      if (fs::exists(wheelhouse / page, ec) && !written_by_fabuild(wheelhouse / page)) {
        throw config_error(
            Location{(wheelhouse / page).string()},
            "this page is not fabuild's (it has no generator mark), and fabuild's index would replace it",
            "fabuild index --adopt writes only its own files: move that page aside, or index the wheels "
            "in a directory of their own");
      }
    }
  }
  out.trees = write_simple_indexes(wheelhouse, out.catalog, options.adopt);

  std::vector<CellRecord> records;
  if (run) {
    records = run->cells;
    records.insert(records.end(), run->earlier.begin(), run->earlier.end());
  }
  const Grid grid = make_grid(wheelhouse, records, filed_cells(manifest), out.catalog);
  out.cells = count_states(grid);
  PageInput page;
  page.grid = &grid;
  page.catalog = &out.catalog;
  page.trees = &out.trees;
  page.run = run ? &*run : nullptr;
  page.base_url = base;
  for (const char* f : {kReportName, kSummaryName, kManifestName}) {
    if (fs::exists(wheelhouse / f, ec)) page.files.emplace_back(f);
  }
  write_file_atomically(wheelhouse / kPageName, render_page(page));
  return out;
}

}  // namespace fabuild
