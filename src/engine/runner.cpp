#include "engine/runner.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "engine/inline_steps.h"
#include "engine/launch.h"
#include "engine/staging.h"
#include "util/read_whole.h"
#include "util/text.h"

namespace fabuild {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

ExitCode RunReport::exit_code() const {
  if (interrupt_signal == SIGINT) return kExitInterrupted;
  if (interrupt_signal == SIGTERM) return kExitTerminated;
  if (interrupt_signal != 0) return static_cast<ExitCode>(128 + interrupt_signal);
  for (const auto& c : cells) {
    if (c.result != CellResult::kOk && c.result != CellResult::kUpToDate) return kExitCellFailed;
  }
  return kExitOk;
}

namespace {

CellResult result_of(const ExitStatus& s) {
  if (s.ok()) return CellResult::kOk;
  if (s.kind == ExitStatus::Kind::kTimedOut) return CellResult::kTimedOut;
  if (s.kind == ExitStatus::Kind::kCancelled) return CellResult::kCancelled;
  return CellResult::kFailed;
}

class Run {
 public:
  Run(const std::vector<CellRun>& cells, const Budget& budget, const RunSettings& settings, ProcessSupervisor& sup,
      StatusPrinter& status)
      : cells_(cells), settings_(settings), sup_(sup), status_(status), scheduler_(budget, demands(cells)) {
    report_.cells.resize(cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
      report_.cells[i].id = cells[i].id;
      report_.cells[i].log_path = cells[i].log_path;
    }
    progress_.total = cells.size();
    if (settings_.stream_output) {
      sup_.on_output = [this](ProcessSupervisor::Id id, std::string_view chunk) { stream(id, chunk); };
    }
  }

  ~Run() { sup_.on_output = nullptr; }

  RunReport go() {
    const auto start = Clock::now();
    origin_ = settings_.origin.value_or(start);
    start_granted();
    while (sup_.running() > 0 || !inline_.empty()) {
      for (const auto& [id, status] : sup_.wait(settings_.tick)) finish(id, status);
      collect_inline();
      handle_interrupts();
      if (!stopping_) start_granted();
      tick();
    }
    report_.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    return std::move(report_);
  }

 private:
  struct Active {
    std::size_t cell;
    Clock::time_point started;
    std::size_t step = 0;
    int jobs = 1;
    std::string partial_line;
    Clock::time_point step_started{};
    std::uintmax_t log_offset = 0;  // where the step's output starts in the log (reports_facts)
  };

  // A process step started before its turn (Step::starts_with), until its turn comes.
  struct Early {
    std::size_t cell;
    std::size_t step;
    std::optional<ExitStatus> status;  // when it ended before its turn
  };

  static std::vector<Demand> demands(const std::vector<CellRun>& cells) {
    std::vector<Demand> d;
    for (const auto& c : cells) d.push_back(c.demand);
    return d;
  }

  milliseconds since_origin() const { return std::chrono::duration_cast<milliseconds>(Clock::now() - origin_); }

  void start_granted() {
    for (const Grant& g : scheduler_.start_more()) start(g);
  }

  void start(const Grant& g) {
    const CellRun& cell = cells_[g.cell];
    CellOutcome& out = report_.cells[g.cell];
    out.max_jobs = g.max_jobs;
    out.nvcc_threads = cell.nvcc_threads;
    const auto now = Clock::now();  // one instant for started_at and the cell's elapsed time
    out.started_at = std::chrono::duration_cast<milliseconds>(now - origin_);
    prepare_staging(cell.staging_dir);
    fs::create_directories(fs::path(cell.log_path).parent_path());
    std::ofstream(cell.log_path, std::ios::trunc)
        << "fabuild: cell " << cell.id << ", MAX_JOBS=" << g.max_jobs << " NVCC_THREADS=" << cell.nvcc_threads << "\n";
    ++progress_.running;
    status_.started(out, progress_);
    if (!g.note.empty()) status_.note(fmt::format("{}: {}", cell.id, g.note));
    run_steps(Active{g.cell, now, 0, g.max_jobs, {}, {}, 0});
  }

  // Starts the cell's next step (a process, or in-process work on a worker thread); ends the
  // cell when none is left or a stop was asked for.
  void run_steps(Active active) {
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
  void start_early(const Active& active) {
    const CellRun& cell = cells_[active.cell];
    const std::string& name = cell.steps[active.step].name;
    for (std::size_t later = active.step + 1; later < cell.steps.size(); ++later) {
      const Step& step = cell.steps[later];
      if (step.starts_with != name || step.run_inline) continue;
      const ProcessSpec spec = step_process(cell, step, active.jobs, settings_.base_env, time_left(active),
                                            {{"FABUILD_GO", go_file(cell, step)}});
      log_start(cell, step.name + ", started beside " + name, spec.argv);
      early_[sup_.start(spec)] = Early{active.cell, later, std::nullopt};
    }
  }

  // A step started early: its turn has come. False when it was not started early.
  bool take_turn(Active& active, const Step& step) {
    const auto it = std::find_if(early_.begin(), early_.end(), [&](const auto& e) {
      return e.second.cell == active.cell && e.second.step == active.step;
    });
    if (it == early_.end()) return false;
    const CellRun& cell = cells_[active.cell];
    std::ofstream(go_file(cell, step)) << "go\n";
    std::ofstream(cell.log_path, std::ios::app) << "fabuild: step " << step.name << ": its turn\n";
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

  void start_inline(Active active, const Step& step) {
    const CellRun& cell = cells_[active.cell];
    std::ofstream(cell.log_path, std::ios::app) << "fabuild: step " << step.name << "\n";
    active.step_started = Clock::now();
    inline_.start(active.cell, cell, step, report_.cells[active.cell].facts, active.started);
    in_inline_step_.emplace(active.cell, std::move(active));
  }

  // The in-process steps that finished: their cells go on with the next step.
  void collect_inline() {
    for (InlineSteps::Done& d : inline_.collect()) {
      const auto it = in_inline_step_.find(d.cell);
      Active active = std::move(it->second);
      in_inline_step_.erase(it);
      const CellRun& cell = cells_[active.cell];
      const Step& step = cell.steps[active.step];
      report_.cells[active.cell].facts = std::move(d.facts);
      log_step_time(cell, step, active.step_started);
      if (!d.result) {
        std::ofstream(cell.log_path, std::ios::app) << "fabuild: " << step.name << ": " << d.result.error() << "\n";
        end_cell(active, ExitStatus{ExitStatus::Kind::kExited, 1}, step.name, d.result.error());
        continue;
      }
      step_succeeded(std::move(active), step);
    }
  }

  void step_succeeded(Active active, const Step& step) {
    if (step.releases_share) {
      scheduler_.release(active.cell);
      report_.cells[active.cell].released_at = since_origin();
    }
    ++active.step;
    run_steps(std::move(active));
  }

  // Where a cell's time went, step by step, for whoever reads its log.
  static void log_step_time(const CellRun& cell, const Step& step, Clock::time_point started) {
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    std::ofstream(cell.log_path, std::ios::app) << fmt::format("fabuild: step {} took {:.2f} s\n", step.name, seconds);
  }

  static ExitStatus cancelled_before(const Step&) {
    ExitStatus s;
    s.kind = ExitStatus::Kind::kCancelled;
    s.signal = SIGTERM;
    return s;
  }

  void start_process(Active active, const Step& step) {
    const CellRun& cell = cells_[active.cell];
    const ProcessSpec spec = step_process(cell, step, active.jobs, settings_.base_env, time_left(active));
    log_start(cell, step.name, spec.argv);
    std::error_code ec;
    active.log_offset = step.reports_facts ? fs::file_size(cell.log_path, ec) : 0;
    active.step_started = Clock::now();
    active_[sup_.start(spec)] = std::move(active);
  }

  // What is left of the cell's time limit (none: the runner passes no limit on).
  milliseconds time_left(const Active& active) const {
    return cells_[active.cell].timeout - std::chrono::duration_cast<milliseconds>(Clock::now() - active.started);
  }

  static void log_start(const CellRun& cell, const std::string& what, const std::vector<std::string>& argv) {
    std::ofstream log(cell.log_path, std::ios::app);
    log << "fabuild: step " << what << ":";
    for (const auto& a : argv) {
      // A program given whole (`python -c` of a script fabuild carries) in one line, not its text.
      const auto lines = std::count(a.begin(), a.end(), '\n');
      if (lines > 0) {
        log << fmt::format(" [<a program of {} lines>]", lines + (a.ends_with('\n') ? 0 : 1));
      } else {
        log << " [" << a << "]";
      }
    }
    log << "\n";
  }

  void finish(ProcessSupervisor::Id id, const ExitStatus& status) {
    if (const auto early = early_.find(id); early != early_.end()) {
      early->second.status = status;  // counted when its turn comes
      return;
    }
    const auto it = active_.find(id);
    if (it == active_.end()) return;  // a step started early whose cell ended first
    Active active = std::move(it->second);
    active_.erase(it);
    process_ended(std::move(active), status);
  }

  void process_ended(Active active, ExitStatus status) {
    const CellRun& cell = cells_[active.cell];
    const Step& step = cell.steps[active.step];
    // The limit is the cell's, for all its steps together: say that one, not what was left of it
    // when this step started.
    if (status.kind == ExitStatus::Kind::kTimedOut && cell.timeout.count() > 0) status.timeout = cell.timeout;
    if (!active.partial_line.empty()) status_.output(cell.id, active.partial_line);
    active.partial_line.clear();
    if (step.reports_facts)
      read_facts(read_tail(cell.log_path, active.log_offset, 1 << 20), report_.cells[active.cell].facts);
    log_step_time(cell, step, active.step_started);
    if (status.ok()) return step_succeeded(std::move(active), step);
    // A cell with one process (a matrix's `command:`) needs no step name in its FAILED line.
    const auto processes =
        std::count_if(cell.steps.begin(), cell.steps.end(), [](const Step& s) { return !s.run_inline; });
    end_cell(active, status, processes > 1 ? step.name : "", "");
  }

  void end_cell(const Active& active, const ExitStatus& status, const std::string& step, const std::string& message) {
    const CellRun& cell = cells_[active.cell];
    CellOutcome& out = report_.cells[active.cell];
    out.status = status;
    out.step = step;
    out.message = message;
    out.result = result_of(status);
    out.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - active.started);
    for (auto it = early_.begin(); it != early_.end();) {  // steps started early whose turn never came
      if (it->second.cell != active.cell) {
        ++it;
        continue;
      }
      if (!it->second.status) sup_.cancel(it->first, milliseconds(0));
      it = early_.erase(it);
    }
    if (cell.cleanup) {
      if (const StepResult cleaned = cell.cleanup(); !cleaned) {
        std::ofstream(cell.log_path, std::ios::app) << "fabuild: cleanup: " << cleaned.error() << "\n";
        status_.note(fmt::format("{}: {}", cell.id, cleaned.error()));
      }
    }
    if (out.result == CellResult::kOk) {
      out.filed = file_outputs(cell.staging_dir, cell.output_dir);
      std::error_code ec;
      if (fs::is_directory(cell.output_dir, ec)) out.output_dir = cell.output_dir;
    }
    discard_staging(cell.staging_dir);
    scheduler_.finish(active.cell);
    --progress_.running;
    ++progress_.done;
    const bool failed = out.result == CellResult::kFailed || out.result == CellResult::kTimedOut;
    if (failed) ++progress_.failed;
    status_.finished(out, failed ? log_tail(cell.log_path, settings_.tail_lines) : std::vector<std::string>{},
                     progress_);
    if (failed && settings_.fail_fast && !stopping_) {
      std::string note = fmt::format("--fail-fast: {} failed; starting no more cells", cell.id);
      if (sup_.running() > 0) note += fmt::format(", stopping {} running", sup_.running());
      status_.note(note);
      stop();
    }
  }

  void handle_interrupts() {
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

  void stop() {
    stopping_ = true;
    scheduler_.stop();
    sup_.cancel_all(max_grace());
  }

  milliseconds max_grace() const {
    milliseconds grace{0};
    for (const auto& c : cells_) grace = std::max(grace, c.kill_grace);
    return grace;
  }

  void tick() {
    std::optional<std::pair<std::size_t, Clock::time_point>> oldest;
    for (const auto& [id, a] : active_) {
      if (!oldest || a.started < oldest->second) oldest = {a.cell, a.started};
    }
    if (!oldest) return;
    status_.tick(progress_, cells_[oldest->first].id,
                 std::chrono::duration_cast<milliseconds>(Clock::now() - oldest->second));
  }

  void stream(ProcessSupervisor::Id id, std::string_view chunk) {
    const auto it = active_.find(id);
    if (it == active_.end()) return;
    std::string& partial = it->second.partial_line;
    partial.append(chunk);
    std::size_t start = 0;
    for (std::size_t nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', start)) {
      status_.output(cells_[it->second.cell].id, std::string_view(partial).substr(start, nl - start));
      start = nl + 1;
    }
    partial.erase(0, start);
  }

  const std::vector<CellRun>& cells_;
  const RunSettings& settings_;
  ProcessSupervisor& sup_;
  StatusPrinter& status_;
  Scheduler scheduler_;
  RunReport report_;
  Progress progress_;
  Clock::time_point origin_;
  std::map<ProcessSupervisor::Id, Active> active_;  // cells in a process step
  InlineSteps inline_{sup_};                        // in-process steps, on threads beside the loop
  std::map<std::size_t, Active> in_inline_step_;    // their cells, by cell
  std::map<ProcessSupervisor::Id, Early> early_;    // steps started early, before their turn
  bool stopping_ = false;
  int interrupts_seen_ = 0;
};

}  // namespace

RunReport run_cells(const std::vector<CellRun>& cells, const Budget& budget, const RunSettings& settings,
                    ProcessSupervisor& supervisor, StatusPrinter& status) {
  return Run(cells, budget, settings, supervisor, status).go();
}

}  // namespace fabuild
