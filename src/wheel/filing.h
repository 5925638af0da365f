#pragma once

// Filing one cell's verified wheel is three atomic steps: the wheel into its directory
// (file_wheel: one rename), that directory's SHA256SUMS, then the cell's entry in
// manifest.json. A process killed between two of them would leave a wheel that SHA256SUMS or
// the manifest does not describe (or describes with the digest of the wheel it replaced).
// So each filing is journalled: WHEELHOUSE/.filing/<cell id>/manifest.json holds the cell's
// complete entry before the first step and is removed after the last. At any instant, then,
// SHA256SUMS and the manifest agree with the wheels except for cells with a journal, and
// finish_interrupted_filings() (the next build runs it first, under the wheelhouse lock)
// completes those from what the journal says.

#include <filesystem>
#include <string>
#include <vector>

#include "wheel/manifest.h"
#include "wheel/wheelhouse.h"

namespace fabuild {

inline constexpr const char* kFilingJournalDir = ".filing";

// What a filing did: the file in place, and the manifest entry recorded for it.
struct CellFiling {
  FiledFile file;
  FiledWheel entry;  // as recorded: with the wheel's path, sha256 and size
};

// Moves `staged` (already verified) into `dest_dir` under the wheelhouse, rewrites the
// directory's SHA256SUMS and records `entry` for `cell_id` in the manifest, journalled as
// above. `entry`'s wheel, sha256 and size are filled in here. A Failure as file_wheel's and
// record_filed's; a journal left by one is finished by the next run. A cell id that would
// leave the journal directory is a UserError.
[[nodiscard]] Expected<CellFiling> file_cell_wheel(const std::filesystem::path& wheelhouse, const std::string& cell_id,
                                                   const std::filesystem::path& staged,
                                                   const std::filesystem::path& dest_dir, FiledWheel entry);

// For every journal left in the wheelhouse: when the wheel it names is in place with its
// digest, makes that directory's SHA256SUMS cover it and records the entry in the manifest;
// otherwise (the move never happened) changes nothing. Removes the journal either way.
// Returns the cell ids whose filing it completed, or the Failure of the first it could not
// complete (its journal stays). The caller holds the wheelhouse lock.
[[nodiscard]] Expected<std::vector<std::string>> finish_interrupted_filings(const std::filesystem::path& wheelhouse);

// The cell ids with a journal now (filings in progress, or interrupted).
std::vector<std::string> pending_filings(const std::filesystem::path& wheelhouse);

}  // namespace fabuild
