#pragma once

// The last run as a picture (inline SVG, no script): one bar per cell over time, labelled with
// its MAX_JOBS, coloured by outcome, and under it the memory the running cells held against
// the budget — where the night went, and whether the budget was the limit.

#include <string>

#include "publish/run_record.h"

namespace fabuild {

// "" when no cell of the run started.
std::string timeline_svg(const RunRecord& run);

// "0:07", "4:31", "1:02:03".
std::string clock_of(double seconds);

}  // namespace fabuild
