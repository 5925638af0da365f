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

#include "util/files.h"
#include "util/processes.h"

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

// `files` (the System's) lists and removes what is left, `kill_tagged` (the System's) ends the
// leftover processes; the filings are finished by wheel/filing.h.
Recovery recover_wheelhouse(Files& files, const KillTagged& kill_tagged, const std::filesystem::path& wheelhouse);

// The variable that names the cache entry a process works on (its value: the entry's path and
// a '/'), set for every step of a cell that makes one (engine/runner.h, EntryClaim); its
// descendants inherit it.
inline constexpr const char* kCacheEntryVariable = "FABUILD_CACHE_ENTRY";
inline std::string entry_tag(const std::filesystem::path& entry) { return entry.string() + "/"; }

// Before a cell makes `entry`, holding its make lock: the processes of a maker that died
// (a run SIGKILLed mid-install leaves its pip running, whatever wheelhouse it built into),
// found by kCacheEntryVariable, are killed, and what they left of the entry is removed. Any such
// process is a leftover: a live maker would hold the lock. Returns the pids killed.
std::vector<long> clear_entry(Files& files, const KillTagged& kill_tagged, const std::filesystem::path& entry);

}  // namespace fabuild
