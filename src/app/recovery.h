#pragma once

// What a build finds in its wheelhouse when the run before it was killed (SIGKILL, OOM killer,
// a power cut of the CI runner) and undoes or finishes before anything else, while it holds the
// wheelhouse lock (so no live run owns any of it):
//   - processes of that run's cells still running (found by the FABUILD_OUT_DIR in their
//     environment, which names a staging directory of this wheelhouse): killed;
//   - its staging directories (.staging/): removed, so nothing half-built is ever filed;
//   - temporary files of interrupted atomic writes (".<name>.tmp.XXXXXX"): removed;
//   - filings it had journalled but not finished (wheel/filing.h): completed.

#include <filesystem>
#include <string>
#include <vector>

namespace fabuild {

struct Recovery {
  std::vector<long> killed;  // pids of leftover cell processes
  int staging_removed = 0;   // directories under .staging/
  int temp_files_removed = 0;
  std::vector<std::string> filings_finished;  // cell ids

  [[nodiscard]] bool empty() const;
  // One line for the person: "recovered from an interrupted run: ...".
  [[nodiscard]] std::string describe() const;
};

Recovery recover_wheelhouse(const std::filesystem::path& wheelhouse);

}  // namespace fabuild
