#pragma once

// What a person sees while cells run: ninja's way. On a terminal one live status line,
// "[3/12 done · 2 running · 1 failed] <cell> 4:31", redrawn in place; otherwise plain lines.
// Each finished cell gets a line; a failed one its log's last lines under a FAILED header.

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/outcome.h"

namespace fabuild {

class StatusPrinter {
 public:
  virtual ~StatusPrinter() = default;
  virtual void started(const CellOutcome& cell, const Progress& p) = 0;
  // `log_tail`: the last lines of a failed cell's log; empty otherwise.
  virtual void finished(const CellOutcome& cell, const std::vector<std::string>& log_tail, const Progress& p) = 0;
  // Once a second or so: the longest-running cell, its time and how far it is ("" unknown).
  virtual void tick(const Progress& p, const std::string& oldest, std::chrono::milliseconds elapsed,
                    const std::string& how_far) = 0;
  // A running cell passed a tenth of its work: a plain line where there is no live status line.
  virtual void progressed(const std::string& id, const CellProgress& progress) = 0;
  // A whole line a cell printed, for -v.
  virtual void output(const std::string& id, std::string_view line) = 0;
  // A line from fabuild itself ("interrupted: stopping 2 cells").
  virtual void note(const std::string& line) = 0;
  // The table after the run, and the line that sums it up.
  virtual void summary(const std::vector<CellOutcome>& cells, std::chrono::milliseconds elapsed) = 0;
};

std::unique_ptr<StatusPrinter> make_status_printer(std::ostream& out, bool terminal);

}  // namespace fabuild
