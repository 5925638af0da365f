#include "engine/runner.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "engine/staging.h"
#include "matrix/command.h"
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
    start_granted();
    while (sup_.running() > 0) {
      for (const auto& [id, status] : sup_.wait(settings_.tick)) finish(id, status);
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
  };

  static std::vector<Demand> demands(const std::vector<CellRun>& cells) {
    std::vector<Demand> d;
    for (const auto& c : cells) d.push_back(c.demand);
    return d;
  }

  void start_granted() {
    for (const Grant& g : scheduler_.start_more()) start(g);
  }

  void start(const Grant& g) {
    const CellRun& cell = cells_[g.cell];
    CellOutcome& out = report_.cells[g.cell];
    out.max_jobs = g.max_jobs;
    out.nvcc_threads = cell.nvcc_threads;
    prepare_staging(cell.staging_dir);
    fs::create_directories(fs::path(cell.log_path).parent_path());
    std::ofstream(cell.log_path, std::ios::trunc)
        << "fabuild: cell " << cell.id << ", MAX_JOBS=" << g.max_jobs << " NVCC_THREADS=" << cell.nvcc_threads << "\n";
    ++progress_.running;
    status_.started(out, progress_);
    if (!g.note.empty()) status_.note(fmt::format("{}: {}", cell.id, g.note));
    run_steps(Active{g.cell, Clock::now(), 0, g.max_jobs, {}, {}});
  }

  // Runs in-process steps at once and starts the next process step; ends the cell when a
  // step fails or none is left.
  void run_steps(Active active) {
    const CellRun& cell = cells_[active.cell];
    for (; active.step < cell.steps.size(); ++active.step) {
      const Step& step = cell.steps[active.step];
      if (stopping_) return end_cell(active, cancelled_before(step), step.name, "cancelled before this step");
      if (!step.run_inline) return start_process(active, step);
      std::ofstream(cell.log_path, std::ios::app) << "fabuild: step " << step.name << "\n";
      const auto started = Clock::now();
      std::string error = step.run_inline(cell);
      log_step_time(cell, step, started);
      if (!error.empty()) {
        std::ofstream(cell.log_path, std::ios::app) << "fabuild: " << step.name << ": " << error << "\n";
        return end_cell(active, ExitStatus{ExitStatus::Kind::kExited, 1}, step.name, error);
      }
    }
    end_cell(active, ExitStatus{}, "", "");
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

  void start_process(const Active& active, const Step& step) {
    const CellRun& cell = cells_[active.cell];
    std::map<std::string, std::string> values = cell.placeholders;
    values["max_jobs"] = std::to_string(active.jobs);
    values["nvcc_threads"] = std::to_string(cell.nvcc_threads);
    values["out"] = cell.staging_dir;
    values["memory_mb"] = fmt::format("{:.0f}", std::ceil(active.jobs * cell.demand.gb_per_job * 1024));
    // Never more than the machine has: an engine refuses --cpus beyond it (--cores may claim more).
    const int hardware = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    values["cores"] = std::to_string(std::min(hardware, active.jobs * std::max(1, cell.demand.threads_per_job)));
    Launch launch;
    for (const auto& arg : step.argv) launch.argv.push_back(step.templated ? expand_placeholders(arg, values) : arg);
    launch.env = cell.env;
    launch.env.emplace_back("MAX_JOBS", std::to_string(active.jobs));
    launch.env.emplace_back("NVCC_THREADS", std::to_string(cell.nvcc_threads));
    launch.env.emplace_back("FABUILD_CELL_ID", cell.id);
    launch.env.emplace_back("FABUILD_OUT_DIR", cell.staging_dir);
    launch.env.insert(launch.env.end(), step.env.begin(), step.env.end());
    launch.cwd = step.cwd;
    if (cell.launch && !step.on_host) launch = cell.launch(launch);
    ProcessSpec spec;
    spec.argv = std::move(launch.argv);
    spec.env = merge_env(settings_.base_env, launch.env);
    spec.cwd = launch.cwd;
    spec.log_path = cell.log_path;
    spec.kill_grace = cell.kill_grace;
    if (cell.timeout.count() > 0) {
      const auto used = std::chrono::duration_cast<milliseconds>(Clock::now() - active.started);
      spec.timeout = std::max(milliseconds(1), cell.timeout - used);
    }
    {
      std::ofstream log(cell.log_path, std::ios::app);
      log << "fabuild: step " << step.name << ":";
      for (const auto& a : spec.argv) log << " [" << a << "]";
      log << "\n";
    }
    Active started = active;
    started.step_started = Clock::now();
    active_[sup_.start(spec)] = started;
  }

  void finish(ProcessSupervisor::Id id, ExitStatus status) {
    const auto it = active_.find(id);
    if (it == active_.end()) return;
    Active active = it->second;
    active_.erase(it);
    const CellRun& cell = cells_[active.cell];
    // The limit is the cell's, for all its steps together: say that one, not what was left of it
    // when this step started.
    if (status.kind == ExitStatus::Kind::kTimedOut && cell.timeout.count() > 0) status.timeout = cell.timeout;
    if (!active.partial_line.empty()) status_.output(cell.id, active.partial_line);
    active.partial_line.clear();
    log_step_time(cell, cell.steps[active.step], active.step_started);
    if (status.ok()) {
      if (cell.steps[active.step].releases_share) scheduler_.release(active.cell);
      ++active.step;
      return run_steps(active);
    }
    // A cell with one process (a matrix's `command:`) needs no step name in its FAILED line.
    const auto processes = std::count_if(cell.steps.begin(), cell.steps.end(), [](const Step& s) { return !s.run_inline; });
    end_cell(active, status, processes > 1 ? cell.steps[active.step].name : "", "");
  }

  void end_cell(const Active& active, const ExitStatus& status, const std::string& step, const std::string& message) {
    const CellRun& cell = cells_[active.cell];
    CellOutcome& out = report_.cells[active.cell];
    out.status = status;
    out.step = step;
    out.message = message;
    out.result = result_of(status);
    out.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - active.started);
    if (cell.cleanup) {
      if (const std::string error = cell.cleanup(); !error.empty()) {
        std::ofstream(cell.log_path, std::ios::app) << "fabuild: cleanup: " << error << "\n";
        status_.note(fmt::format("{}: {}", cell.id, error));
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
    status_.finished(out, failed ? log_tail(cell.log_path, settings_.tail_lines) : std::vector<std::string>{}, progress_);
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
      status_.note(fmt::format("interrupted: stopping {} running cell{} (SIGTERM, then SIGKILL after {}s; "
                               "Ctrl-C again to kill now)",
                               sup_.running(), sup_.running() == 1 ? "" : "s", max_grace().count() / 1000));
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
    if (active_.empty()) return;
    const auto oldest = std::min_element(active_.begin(), active_.end(), [](const auto& a, const auto& b) {
      return a.second.started < b.second.started;
    });
    status_.tick(progress_, cells_[oldest->second.cell].id,
                 std::chrono::duration_cast<milliseconds>(Clock::now() - oldest->second.started));
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
  std::map<ProcessSupervisor::Id, Active> active_;
  bool stopping_ = false;
  int interrupts_seen_ = 0;
};

}  // namespace

RunReport run_cells(const std::vector<CellRun>& cells, const Budget& budget, const RunSettings& settings,
                    ProcessSupervisor& supervisor, StatusPrinter& status) {
  return Run(cells, budget, settings, supervisor, status).go();
}

}  // namespace fabuild
