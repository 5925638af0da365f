#include "wheel/filing.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/hash.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

fs::path journal_of(const fs::path& wheelhouse, const std::string& cell_id) {
  // Cell ids are made of validated matrix values; refuse anything that would leave .filing.
  if (cell_id.empty() || cell_id.find('/') != std::string::npos || cell_id.front() == '.') {
    throw UserError(kExitCellFailed, Location{}, fmt::format("cannot journal the filing of cell \"{}\"", cell_id),
                    "a cell id is a plain file name");
  }
  return wheelhouse / kFilingJournalDir / cell_id;
}

// Removes a filing's journal when the filing stops before its wheel left staging: the journal's
// or the move's failure returned through it.
struct UnlessFiled {
  const fs::path& staged;
  const fs::path& journal;
  bool filed = false;
  ~UnlessFiled() {
    std::error_code ec;
    if (filed || !fs::exists(staged, ec)) return;
    fs::remove_all(journal, ec);
    fs::remove(journal.parent_path(), ec);  // only when empty
  }
};

}  // namespace

Expected<CellFiling> file_cell_wheel(const fs::path& wheelhouse, const std::string& cell_id, const fs::path& staged,
                                     const fs::path& dest_dir, FiledWheel entry) {
  const fs::path journal = journal_of(wheelhouse, cell_id);
  entry.wheel = fs::relative(dest_dir / staged.filename(), wheelhouse).generic_string();
  const Expected<Sha256> sum = sha256_of_file(staged);
  if (!sum) return tl::make_unexpected(sum.error());
  entry.sha256 = hex(*sum);
  std::error_code ec;
  entry.size = fs::file_size(staged, ec);
  fs::remove_all(journal, ec);
  // Another cell's filing removes the journal directory when it leaves it empty, maybe between
  // the two directories create_directories makes: it makes them again then.
  for (int attempt = 0; attempt < 3; ++attempt) {
    ec.clear();
    fs::create_directories(journal, ec);
    if (!ec) break;
  }
  if (ec) {
    return fail(printable(journal.string() + ": cannot create the filing journal: " + ec.message()),
                kWheelhouseWriteHint);
  }
  // The journal's own directory entry must reach the disk before the wheel's rename does: a
  // power cut must not leave a moved wheel whose journal never existed.
  Expected<FiledFile> filed;
  {
    // If the journal or the move fails: a wheel still in staging was not moved, so its journal
    // (empty, or whole) has nothing to finish. A moved one keeps it, for the next run to finish
    // (finish_interrupted_filings).
    UnlessFiled cleanup{staged, journal};
    sync_parent_directory(journal);
    sync_parent_directory(journal.parent_path());
    // The journal: the whole entry, written atomically.
    if (auto journaled = record_filed(journal, cell_id, entry); !journaled)
      return tl::make_unexpected(journaled.error());
    filed = file_wheel(staged, dest_dir);
    if (!filed) return tl::make_unexpected(filed.error());
    cleanup.filed = true;
  }
  if (filed->sha256 != entry.sha256) {
    return fail(printable(filed->path.string() + ": the wheel changed while it was being filed"),
                "something else writes into the cell's staging directory; rebuild the cell");
  }
  if (auto recorded = record_filed(wheelhouse, cell_id, entry); !recorded) return tl::make_unexpected(recorded.error());
  fs::remove_all(journal, ec);
  fs::remove(journal.parent_path(), ec);  // only when empty: no other cell is filing now
  return CellFiling{*filed, std::move(entry)};
}

std::vector<std::string> pending_filings(const fs::path& wheelhouse) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(wheelhouse / kFilingJournalDir, ec)) {
    ids.push_back(e.path().filename().string());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Expected<std::vector<std::string>> finish_interrupted_filings(const fs::path& wheelhouse) {
  std::vector<std::string> finished;
  for (const std::string& id : pending_filings(wheelhouse)) {
    const fs::path journal = wheelhouse / kFilingJournalDir / id;
    // A journal that cannot be read was never completed: the wheel was not moved yet.
    std::optional<FiledWheel> entry;
    if (Expected<std::map<std::string, FiledWheel>> journaled = read_manifest(journal); journaled) {
      if (auto it = journaled->find(id); it != journaled->end()) entry = std::move(it->second);
    }
    if (entry && check_filed(wheelhouse, *entry) == FiledState::kIntact) {
      // A failure keeps the journal, for the next run to finish.
      if (auto sums = write_sha256sums((wheelhouse / entry->wheel).parent_path()); !sums) {
        return tl::make_unexpected(sums.error());
      }
      if (auto recorded = record_filed(wheelhouse, id, *entry); !recorded) return tl::make_unexpected(recorded.error());
      finished.push_back(id);
    }
    std::error_code ec;
    fs::remove_all(journal, ec);
  }
  std::error_code ec;
  fs::remove(wheelhouse / kFilingJournalDir, ec);  // only when empty
  return finished;
}

}  // namespace fabuild
