#pragma once

// summary.md: the last run in Markdown, for a CI step summary (cat it into
// $GITHUB_STEP_SUMMARY): counts, one table row per cell, and the failures with their logs.

#include <string>

#include "publish/run_record.h"

namespace fabuild {

// `wheelhouse` is how paths are shown ("wheelhouse/logs/<id>.log"), as the person gave it.
std::string summary_markdown(const RunRecord& run, const std::string& wheelhouse);

}  // namespace fabuild
