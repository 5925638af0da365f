// A cell's end (run_loop.h): its outcome, the steps started early that never had their turn,
// its cleanup process, its wind-up on a worker (outputs filed, staging removed), and what the
// person sees; and stopping the run.

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "engine/launch.h"
#include "engine/run_loop.h"
#include "engine/staging.h"
#include "util/file.h"
#include "util/read_whole.h"

namespace fabuild::engine {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

CellResult result_of(const ExitStatus& s) {
  if (s.ok()) return CellResult::kOk;
  if (s.kind == ExitStatus::Kind::kTimedOut) return CellResult::kTimedOut;
  if (s.kind == ExitStatus::Kind::kCancelled) return CellResult::kCancelled;
  return CellResult::kFailed;
}

// Below this, a failed cell's disk is taken to be why it failed.
constexpr std::uint64_t kFullDisk = 64ull << 20;

// Whether the end of the cell's log says a write failed for lack of space: pip, uv and the
// compilers remove what they wrote when they fail, so the disk may have room again by now.
bool log_says_no_space(const std::string& log_path) {
  const std::string tail = read_tail(log_path, 0, 64 * 1024);
  return tail.find("No space left on device") != std::string::npos || tail.find("[Errno 28]") != std::string::npos;
}

// A disk that filled up is said in the cell's outcome, with the disk and what is free there:
// the log on that disk may have been cut before the compiler's "No space left on device"
// reached it, and where it did reach it, the person should not have to open the log to learn it.
void say_full_disk(Files& files, const CellRun& cell, CellOutcome& out) {
  const std::string& where = cell.output_dir.empty() ? cell.staging_dir : cell.output_dir;
  const std::uint64_t free = std::min(free_bytes(cell.staging_dir), free_bytes(where));
  const bool logged = log_says_no_space(cell.log_path);
  if (free >= kFullDisk && !logged) return;
  std::string full = logged ? fmt::format("no space left on device (its log says so); {} MB free now on the disk of {}",
                                          free >> 20, where)
                            : fmt::format("the disk of {} is full ({} MB free)", where, free >> 20);
  if (cell.disk_need > 0) {
    full += fmt::format(", where it needs about {:.1f} GB", static_cast<double>(cell.disk_need) / 1e9);
  }
  out.message = (out.message.empty() ? out.status.describe() : out.message) + "; " + full;
  (void)files.append(cell.log_path, "fabuild: " + full + "\n");
}

}  // namespace

void RunLoop::end_cell(const Active& active, const ExitStatus& status, const std::string& step,
                       const std::string& message) {
  const CellRun& cell = cells_[active.cell];
  CellOutcome& out = report_.cells[active.cell];
  out.status = status;
  out.step = step;
  out.message = message;
  out.result = result_of(status);
  out.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - active.started);
  // Before its staging directory goes, which would free the disk and hide why.
  if (out.result == CellResult::kFailed || out.result == CellResult::kTimedOut) say_full_disk(files_, cell, out);
  cancel_early(active.cell);
  if (cell.cleanup) {  // a process, like any other: the loop goes on meanwhile
    ProcessSpec spec;
    spec.argv = cell.cleanup->argv;
    spec.env = cell.cleanup->env;
    spec.timeout = cell.cleanup->timeout;
    spec.log_path = cell.log_path;
    spec.kill_grace = milliseconds(2000);
    log_step_start(files_, cell.log_path, "cleanup", spec.argv);
    Active ending = active;
    ending.output.clear();  // the cleanup's own, for its judge
    cleaning_[sup_.start(spec)] = std::move(ending);
    return;
  }
  wind_up(active);
}

// Steps of the cell started early whose turn never came.
void RunLoop::cancel_early(std::size_t cell) {
  for (auto it = early_.begin(); it != early_.end();) {
    if (it->second.cell != cell) {
      ++it;
      continue;
    }
    if (!it->second.status) sup_.cancel(it->first, milliseconds(0));
    it = early_.erase(it);
  }
}

// The cleanup ended: what went wrong is said; the outcome stands.
void RunLoop::cleaned(const Active& active, const ExitStatus& status) {
  const CellRun& cell = cells_[active.cell];
  StepResult judged;
  if (cell.cleanup->judge) {
    judged = cell.cleanup->judge(status, active.output);
  } else if (!status.ok()) {
    judged = fail(status.describe());
  }
  if (!judged) {
    log_line(cell, "cleanup: " + judged.error().message());
    status_.note(fmt::format("{}: {}", cell.id, judged.error().message()));
  }
  wind_up(active);
}

// Files a good cell's outputs and removes its staging directory, on a worker thread.
void RunLoop::wind_up(const Active& active) {
  const CellRun& cell = cells_[active.cell];
  const bool ok = report_.cells[active.cell].result == CellResult::kOk;
  // What a cell that held its entry's claim made of it, when it did not end well (EntryClaim).
  const bool discard = !ok && claims_.count(active.cell) > 0;
  Pending& slot = pending_[active.cell] = Pending{active, nullptr, {}, {}, {}, false};
  Files& files = files_;
  workers_.start(active.cell, [&slot, &cell, &files, ok, discard] {
    if (discard) (void)files.remove_all(cell.claim->entry);
    if (ok) {
      if (auto filed = file_outputs(files, cell.staging_dir, cell.output_dir); filed) {
        slot.filed = std::move(*filed);
        slot.output_dir = files.is_directory(cell.output_dir);
      } else {
        slot.result = fail("cannot file its outputs: " + filed.error().what);
      }
    }
    discard_staging(files, cell.staging_dir);
  });
}

void RunLoop::finish_cell(const Pending& done) {
  const std::size_t index = done.active.cell;
  const CellRun& cell = cells_[index];
  CellOutcome& out = report_.cells[index];
  out.filed = done.filed;
  if (done.output_dir) out.output_dir = cell.output_dir;
  if (!done.result) {
    log_line(cell, done.result.error().message());
    out.status = ExitStatus{ExitStatus::Kind::kExited, 1};
    out.result = CellResult::kFailed;
    out.message = done.result.error().message();
  }
  scheduler_.finish(index);
  claims_.erase(index);  // another fabuild waiting for the entry goes on
  --progress_.running;
  ++progress_.done;
  const bool failed = out.result == CellResult::kFailed || out.result == CellResult::kTimedOut;
  if (failed) ++progress_.failed;
  status_.finished(out, failed ? log_tail(files_, cell.log_path, settings_.tail_lines) : std::vector<std::string>{},
                   progress_);
  if (failed && settings_.fail_fast && !stopping_) {
    std::string note = fmt::format("--fail-fast: {} failed; starting no more cells", cell.id);
    if (sup_.running() > 0) note += fmt::format(", stopping {} running", sup_.running());
    status_.note(note);
    stop();
  }
}

void RunLoop::handle_interrupts() {
  const int count = sup_.interrupt_count();
  if (count == interrupts_seen_) return;
  interrupts_seen_ = count;
  report_.interrupt_signal = sup_.interrupt_signal();
  if (!stopping_) {
    status_.note(fmt::format("interrupted: stopping {} running cell{} ({} after {}s; Ctrl-C again to kill now)",
                             progress_.running, progress_.running == 1 ? "" : "s", stop_sequence(),
                             max_grace().count() / 1000));
    stop();
  } else {
    status_.note("interrupted again: killing every cell now");
    sup_.cancel_all(milliseconds(0));
  }
}

void RunLoop::stop() {
  stopping_ = true;
  scheduler_.stop();
  sup_.cancel_all(max_grace());
  // Cells gone back past their share and waiting for it again (go_back) are granted no more:
  // each ends here, cancelled before the step it was to run again.
  std::map<std::size_t, Active> resuming;
  resuming.swap(resuming_);
  for (auto& [cell, active] : resuming) run_steps(std::move(active));
}

milliseconds RunLoop::max_grace() const {
  milliseconds grace{0};
  for (const auto& c : cells_) grace = std::max(grace, c.kill_grace);
  return grace;
}

}  // namespace fabuild::engine
