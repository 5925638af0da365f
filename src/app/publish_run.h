#pragma once

// What a build leaves besides wheels: the record of its run (report.json, summary.md), the
// pip indexes and the matrix page (src/publish), made at the end of every build and by
// `fabuild index` on their own.

#include <chrono>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/plan.h"
#include "engine/status.h"
#include "util/exit_code.h"

namespace fabuild {

// Passes everything on to the printer it wraps, and notes when each cell starts: the engine's
// outcomes say how long a cell took, this says when, for the timeline.
class StartTimes : public StatusPrinter {
 public:
  using Clock = std::chrono::steady_clock;
  StartTimes(StatusPrinter& inner, Clock::time_point origin) : inner_(inner), origin_(origin) {}

  void started(const CellOutcome& cell, const Progress& p) override;
  void finished(const CellOutcome& cell, const std::vector<std::string>& log_tail, const Progress& p) override {
    inner_.finished(cell, log_tail, p);
  }
  void tick(const Progress& p, const std::string& oldest, std::chrono::milliseconds elapsed) override {
    inner_.tick(p, oldest, elapsed);
  }
  void output(const std::string& id, std::string_view line) override { inner_.output(id, line); }
  void note(const std::string& line) override { inner_.note(line); }
  void summary(const std::vector<CellOutcome>& cells, std::chrono::milliseconds elapsed) override {
    inner_.summary(cells, elapsed);
  }

  // Seconds from the origin to the cell's start; nullopt for a cell that did not start.
  [[nodiscard]] std::optional<double> start_of(const std::string& id) const;

 private:
  StatusPrinter& inner_;
  Clock::time_point origin_;
  std::map<std::string, double> starts_;
};

// What build() knows at its end, for the record.
struct FinishedRun {
  std::string started;                        // UTC, ISO 8601
  std::chrono::milliseconds elapsed{0};
  ExitCode exit_code = kExitOk;
  const std::vector<CellOutcome>* cells = nullptr;        // one per plan cell, in plan order
  const std::vector<CellOutcome>* preparation = nullptr;  // Python environments, if any were made
  std::map<std::string, double> gb_per_job;               // of each preparation run, by id
  const StartTimes* starts = nullptr;
};

// Records the run, then writes the indexes and the page; says where on `out`. A failure here
// does not hide the build's result: it is reported and the returned code is at least 1.
ExitCode publish_build(const Plan& plan, const FinishedRun& run, std::ostream& out);

struct IndexOptions {
  std::string wheelhouse = "wheelhouse";
  std::string base_url;
  bool quiet = false;
};

// `fabuild index [WHEELHOUSE]`: 0 when every wheel was published, 1 when some were left out
// (each named), 2 when the wheelhouse is not a directory.
ExitCode index_command(const IndexOptions& options, std::ostream& out);

}  // namespace fabuild
