#include "engine/runner.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "engine/launch.h"
#include "engine/run_loop.h"
#include "engine/staging.h"
#include "util/error.h"
#include "util/file.h"
#include "util/text.h"

namespace fabuild {

ExitCode RunReport::exit_code() const {
  if (interrupt_signal == SIGINT) return kExitInterrupted;
  if (interrupt_signal == SIGTERM) return kExitTerminated;
  if (interrupt_signal != 0) return static_cast<ExitCode>(128 + interrupt_signal);
  for (const auto& c : cells) {
    if (c.result != CellResult::kOk && c.result != CellResult::kUpToDate) return kExitCellFailed;
  }
  return kExitOk;
}

RunReport run_cells(const std::vector<CellRun>& cells, const Budget& budget, const RunSettings& settings,
                    ProcessSupervisor& supervisor, Files& files, StatusPrinter& status) {
  return engine::RunLoop(cells, budget, settings, supervisor, files, status).go();
}

}  // namespace fabuild

namespace fabuild::engine {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

std::vector<Demand> demands(const std::vector<CellRun>& cells) {
  std::vector<Demand> d;
  for (const auto& c : cells) d.push_back(c.demand);
  return d;
}

// Whether the disk of the cell's staging directory can take what the cell needs; a Failure
// saying how short it is and what to do.
Expected<void> disk_room(const CellRun& cell) {
  if (cell.disk_need == 0) return {};
  const std::string& where = cell.output_dir.empty() ? cell.staging_dir : cell.output_dir;
  const std::uint64_t free = free_bytes(where);
  if (free >= cell.disk_need) return {};
  return fail(
      fmt::format("{:.1f} GB free on the disk of {}, and the cell needs about {:.1f} GB; free some space, or "
                  "build on a larger disk (-o for the wheelhouse, FABUILD_CACHE_DIR for the caches)",
                  static_cast<double>(free) / 1e9, where, static_cast<double>(cell.disk_need) / 1e9));
}

ExitStatus cancelled_before(const Step&) {
  ExitStatus s;
  s.kind = ExitStatus::Kind::kCancelled;
  s.signal = SIGTERM;
  return s;
}

}  // namespace

RunLoop::RunLoop(const std::vector<CellRun>& cells, const Budget& budget, const RunSettings& settings,
                 ProcessSupervisor& sup, Files& files, StatusPrinter& status)
    : cells_(cells),
      settings_(settings),
      sup_(sup),
      files_(files),
      status_(status),
      scheduler_(budget, demands(cells)) {
  report_.cells.resize(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    report_.cells[i].id = cells[i].id;
    report_.cells[i].log_path = cells[i].log_path;
  }
  progress_.total = cells.size();
  sup_.on_output = [this](ProcessSupervisor::Id id, std::string_view chunk) { output(id, chunk); };
}

RunLoop::~RunLoop() { sup_.on_output = nullptr; }

RunReport RunLoop::go() {
  const auto start = Clock::now();
  origin_ = settings_.origin.value_or(start);
  start_granted();
  while (sup_.running() > 0 || !workers_.empty() || !waiting_.empty()) {
    // Cells waiting for a claim try again every kClaimPoll while nothing else wakes the loop.
    const milliseconds wait = waiting_.empty() || sup_.running() > 0 ? settings_.tick : kClaimPoll;
    for (const auto& [id, status] : sup_.wait(wait)) finish(id, status);
    collect_work();
    handle_interrupts();
    retry_claims();
    if (!stopping_) start_granted();
    tick();
  }
  report_.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  return std::move(report_);
}

void RunLoop::start_granted() {
  for (const Grant& g : scheduler_.start_more()) start(g);
}

void RunLoop::start(const Grant& g) {
  if (const auto back = resuming_.find(g.cell); back != resuming_.end()) {  // its claim is held
    Active active = std::move(back->second);
    resuming_.erase(back);
    active.jobs = g.max_jobs;
    report_.cells[g.cell].max_jobs = g.max_jobs;
    return run_steps(std::move(active));
  }
  if (!claimed(g, true)) return waiting_.push_back(g);
  begin(g);
}

void RunLoop::log_line(const CellRun& cell, std::string_view text) {
  // A log that cannot be written loses the line, never the build.
  (void)files_.append(cell.log_path, fmt::format("fabuild: {}\n", text));
}

void RunLoop::begin(const Grant& g) {
  const CellRun& cell = cells_[g.cell];
  CellOutcome& out = report_.cells[g.cell];
  out.max_jobs = g.max_jobs;
  out.nvcc_threads = cell.nvcc_threads;
  const auto now = Clock::now();  // one instant for started_at and the cell's elapsed time
  out.started_at = std::chrono::duration_cast<milliseconds>(now - origin_);
  Expected<void> ready = prepare_staging(files_, cell.staging_dir);
  if (ready) ready = files_.create_directories(fs::path(cell.log_path).parent_path());
  if (ready) {  // a log that cannot be started loses its lines, not the cell
    (void)files_.write(
        cell.log_path,
        fmt::format("fabuild: cell {}, MAX_JOBS={}{}\n", cell.id, g.max_jobs,
                    cell.nvcc_threads > 0 ? " NVCC_THREADS=" + std::to_string(cell.nvcc_threads) : std::string()));
  }
  ++progress_.running;
  status_.started(out, progress_);
  if (!g.note.empty()) status_.note(fmt::format("{}: {}", cell.id, g.note));
  Active active{g.cell, now, 0, g.max_jobs, {}, {}, {}};
  if (!ready) {
    const std::string why = "cannot make its staging directory: " + ready.error().what;
    return end_cell(active, ExitStatus{ExitStatus::Kind::kExited, 1}, "staging", why);
  }
  if (made_meanwhile(active)) return end_cell(active, ExitStatus{}, "", "");
  if (const auto room = disk_room(cell); !room) {
    log_line(cell, room.error().what);
    return end_cell(active, ExitStatus{ExitStatus::Kind::kExited, 1}, "space", room.error().what);
  }
  run_steps(std::move(active));
}

// Starts the cell's next step (a process, or in-process work on a worker thread); ends the
// cell when none is left or a stop was asked for.
void RunLoop::run_steps(Active active) {
  const CellRun& cell = cells_[active.cell];
  if (active.step >= cell.steps.size()) return end_cell(active, ExitStatus{}, "", "");
  const Step& step = cell.steps[active.step];
  if (stopping_) return end_cell(active, cancelled_before(step), step.name, "cancelled before this step");
  if (take_turn(active, step)) return;
  const Active at = active;
  if (step.run_inline) {
    start_inline(std::move(active), step);
  } else {
    start_process(std::move(active), step);
  }
  start_early(at);
}

// Starts the later steps that start with this one (Step::starts_with).
void RunLoop::start_early(const Active& active) {
  const CellRun& cell = cells_[active.cell];
  const std::string& name = cell.steps[active.step].name;
  for (std::size_t later = active.step + 1; later < cell.steps.size(); ++later) {
    const Step& step = cell.steps[later];
    if (step.starts_with != name || step.run_inline) continue;
    const ProcessSpec spec = step_process(cell, step, active.jobs, settings_.base_env, settings_.machine_cores,
                                          time_left(active), {{"FABUILD_GO", go_file(cell, step)}});
    log_step_start(files_, cell.log_path, step.name + ", started beside " + name, spec.argv);
    early_[sup_.start(spec)] = Early{active.cell, later, std::nullopt};
  }
}

// A step started early: its turn has come. False when it was not started early.
bool RunLoop::take_turn(Active& active, const Step& step) {
  const auto it = std::find_if(early_.begin(), early_.end(), [&](const auto& e) {
    return e.second.cell == active.cell && e.second.step == active.step;
  });
  if (it == early_.end()) return false;
  const CellRun& cell = cells_[active.cell];
  (void)files_.write(go_file(cell, step), "go\n");  // a step that misses it goes on at its end
  log_line(cell, "step " + step.name + ": its turn");
  active.step_started = Clock::now();
  const ProcessSupervisor::Id id = it->first;
  const std::optional<ExitStatus> ended = it->second.status;
  early_.erase(it);
  if (ended) {
    process_ended(std::move(active), *ended);
  } else {
    active_[id] = std::move(active);
  }
  return true;
}

void RunLoop::start_inline(Active active, const Step& step) {
  const CellRun& cell = cells_[active.cell];
  log_line(cell, "step " + step.name);
  active.step_started = Clock::now();
  const std::size_t index = active.cell;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(active.step_started - active.started);
  Pending& slot = pending_[index] = Pending{std::move(active), &step, {}, report_.cells[index].facts, {}, false};
  workers_.start(index, [&slot, &cell, &step, elapsed] {
    try {
      StepContext context{cell, slot.facts, elapsed};
      slot.result = step.run_inline(context);
    } catch (const std::exception& e) {  // a UserError keeps its hint
      slot.result = tl::make_unexpected(failure_of(e));
    }
  });
}

// The jobs on worker threads that ended: a cell past an in-process step goes on with the
// next; a wound-up cell is finished.
void RunLoop::collect_work() {
  for (std::size_t index : workers_.collect()) {
    const auto it = pending_.find(index);
    Pending done = std::move(it->second);
    pending_.erase(it);
    if (done.step == nullptr) {
      finish_cell(done);
      continue;
    }
    const CellRun& cell = cells_[index];
    const Step& step = *done.step;
    report_.cells[index].facts = std::move(done.facts);
    log_step_time(files_, cell.log_path, step.name,
                  std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - done.active.step_started));
    if (!done.result) {
      const std::string message = done.result.error().message();
      log_line(cell, step.name + ": " + message);
      if (go_back(done.active, step.name, message)) continue;
      end_cell(done.active, ExitStatus{ExitStatus::Kind::kExited, 1}, step.name, message);
      continue;
    }
    step_succeeded(std::move(done.active), step);
  }
}

void RunLoop::step_succeeded(Active active, const Step& step) {
  if (step.releases_share) {
    scheduler_.release(active.cell);
    report_.cells[active.cell].released_at = since_origin();
  }
  ++active.step;
  run_steps(std::move(active));
}

bool RunLoop::go_back(Active& active, const std::string& step, const std::string& message) {
  const CellRun& cell = cells_[active.cell];
  if (!cell.retry || active.retried || stopping_) return false;
  active.retried = true;
  const std::string to = cell.retry(step, message, report_.cells[active.cell].facts);
  if (to.empty()) return false;
  std::size_t target = 0;
  while (target <= active.step && cell.steps[target].name != to) ++target;
  if (target > active.step) return false;  // not a step it has been through
  log_line(cell, "going back to step " + to);
  cancel_early(active.cell);
  // Every step from the target on has its turn anew: a go file a step started early was given
  // the first time would let the one started beside the target now go on before its turn.
  for (std::size_t k = target; k < cell.steps.size(); ++k) {
    if (cell.steps[k].starts_with.empty()) continue;
    if (const auto removed = files_.remove(go_file(cell, cell.steps[k])); !removed) {
      log_line(cell, "cannot go back to step " + to + ": " + removed.error().what);
      return false;
    }
  }
  bool released = false;  // the share was given back by a step it goes back before
  for (std::size_t k = target; k < active.step; ++k) released = released || cell.steps[k].releases_share;
  active.step = target;
  if (released) {
    report_.cells[active.cell].released_at.reset();
    scheduler_.requeue(active.cell);
    resuming_.emplace(active.cell, std::move(active));
  } else {
    run_steps(std::move(active));
  }
  return true;
}

void RunLoop::start_process(Active active, const Step& step) {
  const CellRun& cell = cells_[active.cell];
  const ProcessSpec spec = step_process(cell, step, active.jobs, settings_.base_env, settings_.machine_cores,
                                        time_left(active), env_of_facts(report_.cells[active.cell].facts));
  log_step_start(files_, cell.log_path, step.name, spec.argv);
  active.step_started = Clock::now();
  active_[sup_.start(spec)] = std::move(active);
}

// What is left of the cell's time limit (none: the runner passes no limit on).
milliseconds RunLoop::time_left(const Active& active) const {
  return cells_[active.cell].timeout - std::chrono::duration_cast<milliseconds>(Clock::now() - active.started);
}

void RunLoop::finish(ProcessSupervisor::Id id, const ExitStatus& status) {
  if (const auto early = early_.find(id); early != early_.end()) {
    early->second.status = status;  // counted when its turn comes
    return;
  }
  if (const auto ending = cleaning_.find(id); ending != cleaning_.end()) {
    Active active = std::move(ending->second);
    cleaning_.erase(ending);
    return cleaned(std::move(active), status);
  }
  const auto it = active_.find(id);
  if (it == active_.end()) return;  // a step started early whose cell ended first
  Active active = std::move(it->second);
  active_.erase(it);
  process_ended(std::move(active), status);
}

void RunLoop::process_ended(Active active, ExitStatus status) {
  const CellRun& cell = cells_[active.cell];
  const Step& step = cell.steps[active.step];
  // The limit is the cell's, for all its steps together: say that one, not what was left of it
  // when this step started.
  if (status.kind == ExitStatus::Kind::kTimedOut && cell.timeout.count() > 0) status.timeout = cell.timeout;
  if (!active.partial_line.empty()) status_.output(cell.id, active.partial_line);
  active.partial_line.clear();
  if (step.reports_facts) read_facts(active.output, report_.cells[active.cell].facts);
  log_step_time(files_, cell.log_path, step.name,
                std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - active.step_started));
  if (status.ok()) return step_succeeded(std::move(active), step);
  if (status.kind == ExitStatus::Kind::kExited && go_back(active, step.name, status.describe())) return;
  // A cell with one process (a matrix's `command:`) needs no step name in its FAILED line.
  const auto processes =
      std::count_if(cell.steps.begin(), cell.steps.end(), [](const Step& s) { return !s.run_inline; });
  end_cell(active, status, processes > 1 ? step.name : "", "");
}

milliseconds RunLoop::since_origin() const { return std::chrono::duration_cast<milliseconds>(Clock::now() - origin_); }

}  // namespace fabuild::engine
