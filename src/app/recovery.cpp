#include "app/recovery.h"

#include <fmt/format.h>

#include <regex>

#include "util/error.h"
#include "util/text.h"
#include "wheel/filing.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

// An AtomicFile's temporary: ".<name>.tmp.XXXXXX" (mkstemp's six characters).
bool is_atomic_temp(const std::string& name) {
  static const std::regex pattern(R"(^\..+\.tmp\.[A-Za-z0-9]{6}$)");
  return std::regex_match(name, pattern);
}

}  // namespace

bool Recovery::empty() const {
  return killed.empty() && staging_removed == 0 && temp_files_removed == 0 && filings_finished.empty();
}

std::string Recovery::describe() const {
  std::vector<std::string> parts;
  if (!killed.empty())
    parts.push_back(fmt::format("killed {} leftover cell process{}", killed.size(), killed.size() == 1 ? "" : "es"));
  if (staging_removed > 0) {
    parts.push_back(fmt::format("removed {} staging director{}", staging_removed, staging_removed == 1 ? "y" : "ies"));
  }
  if (temp_files_removed > 0) {
    parts.push_back(
        fmt::format("removed {} unfinished temporary file{}", temp_files_removed, temp_files_removed == 1 ? "" : "s"));
  }
  if (!filings_finished.empty()) parts.push_back("finished filing " + join(filings_finished, ", "));
  return "recovered from an interrupted run: " + join(parts, "; ");
}

Recovery recover_wheelhouse(Files& files, const KillTagged& kill_tagged, const fs::path& wheelhouse) {
  Recovery r;
  const fs::path staging = fs::absolute(wheelhouse / ".staging");
  // Cells of an earlier run on this wheelhouse, orphaned when it died: FABUILD_OUT_DIR under
  // `staging`. Descendants inherit the variable, so a compiler a build tool started (even in
  // its own session) is found as well.
  r.killed = kill_tagged("FABUILD_OUT_DIR", staging.string() + "/");
  for (const fs::path& e : files.list(staging).value_or(std::vector<fs::path>())) {
    if (files.remove_all(e)) ++r.staging_removed;
  }
  files.remove(staging);
  // The logs and the filing journal hold no temporary file of an atomic write: not walked.
  const auto bookkeeping = [](const fs::path& dir) {
    const std::string name = dir.filename().string();
    return name == "logs" || name == kFilingJournalDir;
  };
  for (const fs::path& file : files.files_under(wheelhouse, bookkeeping).value_or(std::vector<fs::path>())) {
    if (!is_atomic_temp(file.filename().string())) continue;
    if (const Expected<bool> removed = files.remove(file); removed && *removed) ++r.temp_files_removed;
  }
  Expected<std::vector<std::string>> finished = finish_interrupted_filings(wheelhouse);
  if (!finished) throw user_error_of(finished.error());  // the run stops: its wheelhouse is not whole
  r.filings_finished = std::move(*finished);
  return r;
}

std::vector<long> clear_entry(Files& files, const KillTagged& kill_tagged, const fs::path& entry) {
  std::vector<long> killed = kill_tagged(kCacheEntryVariable, entry_tag(entry));
  files.remove_all(entry);
  return killed;
}

}  // namespace fabuild
