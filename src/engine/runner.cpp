#include "engine/runner.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "engine/staging.h"
#include "matrix/command.h"
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

// Work done beside the loop: one in-process step of one cell, on a thread of its own.
struct InlineJob {
  std::thread thread;
  Clock::time_point started;
};

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

  ~Run() {
    sup_.on_output = nullptr;
    for (auto& [cell, job] : inline_) job.thread.join();
  }

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

  // What a worker hands back to the loop.
  struct InlineDone {
    Active active;
    StepResult result;
    Facts facts;
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
    if (step.run_inline) return start_inline(active, step);
    start_process(active, step);
  }

  void start_inline(Active active, const Step& step) {
    const CellRun& cell = cells_[active.cell];
    std::ofstream(cell.log_path, std::ios::app) << "fabuild: step " << step.name << "\n";
    active.step_started = Clock::now();
    // The worker gets a copy of the cell's facts: the loop and the worker share nothing but the
    // queue of what is done.
    Facts facts = report_.cells[active.cell].facts;
    InlineJob& job = inline_[active.cell];
    job.started = active.step_started;
    job.thread = std::thread([this, active, facts = std::move(facts), &step, &cell]() mutable {
      StepResult result;
      try {
        StepContext context{cell, facts, active.started};
        result = step.run_inline(context);
      } catch (const std::exception& e) {
        result = tl::make_unexpected(std::string(e.what()));
      }
      {
        const std::lock_guard<std::mutex> lock(done_mutex_);
        done_.push_back(InlineDone{std::move(active), std::move(result), std::move(facts)});
      }
      sup_.wake();
    });
  }

  // The in-process steps that finished: their cells go on with the next step.
  void collect_inline() {
    std::vector<InlineDone> done;
    {
      const std::lock_guard<std::mutex> lock(done_mutex_);
      done.swap(done_);
    }
    for (InlineDone& d : done) {
      const auto it = inline_.find(d.active.cell);
      it->second.thread.join();
      inline_.erase(it);
      const CellRun& cell = cells_[d.active.cell];
      const Step& step = cell.steps[d.active.step];
      report_.cells[d.active.cell].facts = std::move(d.facts);
      log_step_time(cell, step, d.active.step_started);
      if (!d.result) {
        std::ofstream(cell.log_path, std::ios::app) << "fabuild: " << step.name << ": " << d.result.error() << "\n";
        end_cell(d.active, ExitStatus{ExitStatus::Kind::kExited, 1}, step.name, d.result.error());
        continue;
      }
      step_succeeded(d.active, step);
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
    // The one place MAX_JOBS and NVCC_THREADS are set: from the share the scheduler granted.
    // CMAKE_BUILD_PARALLEL_LEVEL is the same MAX_JOBS for `cmake --build` (library cells).
    launch.env.emplace_back("MAX_JOBS", std::to_string(active.jobs));
    launch.env.emplace_back("CMAKE_BUILD_PARALLEL_LEVEL", std::to_string(active.jobs));
    launch.env.emplace_back("NVCC_THREADS", std::to_string(cell.nvcc_threads));
    launch.env.emplace_back("FABUILD_CELL_ID", cell.id);
    launch.env.emplace_back("FABUILD_OUT_DIR", cell.staging_dir);
    launch.env.insert(launch.env.end(), step.env.begin(), step.env.end());
    launch.cwd = step.cwd;
    if (cell.launch && !step.on_host) launch = cell.launch(launch);
    ProcessSpec spec;
    spec.argv = std::move(launch.argv);
    spec.env = settings_.base_env.with(launch.env).entries();
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
    std::error_code ec;
    active.log_offset = step.reports_facts ? fs::file_size(cell.log_path, ec) : 0;
    active.step_started = Clock::now();
    active_[sup_.start(spec)] = std::move(active);
  }

  void finish(ProcessSupervisor::Id id, ExitStatus status) {
    const auto it = active_.find(id);
    if (it == active_.end()) return;
    Active active = std::move(it->second);
    active_.erase(it);
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
  std::map<std::size_t, InlineJob> inline_;         // cells in an in-process step, by cell
  std::mutex done_mutex_;
  std::vector<InlineDone> done_;  // guarded by done_mutex_: filled by workers
  bool stopping_ = false;
  int interrupts_seen_ = 0;
};

}  // namespace

RunReport run_cells(const std::vector<CellRun>& cells, const Budget& budget, const RunSettings& settings,
                    ProcessSupervisor& supervisor, StatusPrinter& status) {
  return Run(cells, budget, settings, supervisor, status).go();
}

}  // namespace fabuild
