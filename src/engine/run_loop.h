#pragma once

// The loop behind run_cells (runner.h): cells started as the scheduler grants them, each
// cell's steps in order (processes on the supervisor, in-process work on worker threads, a
// step started early beside the one it names), and each cell's end (its cleanup process, its
// outputs filed and staging removed on a worker). Nothing in it waits on anything but the
// supervisor. Internal to the engine: runner.cpp runs the steps, run_loop_end.cpp ends cells,
// run_loop_output.cpp says how far they are.

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/runner.h"
#include "engine/workers.h"
#include "util/holder_lock.h"

namespace fabuild::engine {

using Clock = std::chrono::steady_clock;

// How often a cell waiting for its entry's claim tries again.
inline constexpr std::chrono::milliseconds kClaimPoll{200};

class RunLoop {
 public:
  RunLoop(const std::vector<CellRun>& cells, const Budget& budget, const RunSettings& settings, ProcessSupervisor& sup,
          Files& files, StatusPrinter& status);
  ~RunLoop();
  RunLoop(const RunLoop&) = delete;
  RunLoop& operator=(const RunLoop&) = delete;

  RunReport go();

 private:
  // A cell between its start and its end, where it is in its steps.
  struct Active {
    std::size_t cell;
    Clock::time_point started;
    std::size_t step = 0;
    int jobs = 1;
    std::string partial_line;  // of its output, for -v's stream
    // The end of its process's own output, as the supervisor read it, where it is needed: the
    // facts of a step that reports them, what the cleanup's judge reads.
    std::string output;
    Clock::time_point step_started{};
    bool retried = false;  // CellRun::retry was asked already
  };

  // A process step started before its turn (Step::starts_with), until its turn comes.
  struct Early {
    std::size_t cell;
    std::size_t step;
    std::optional<ExitStatus> status;  // when it ended before its turn
  };

  // A cell's job on a worker thread (workers.h) and what it leaves for the loop, which reads
  // it once the job is joined: an in-process step's result and facts, or the cell's wind-up.
  struct Pending {
    Active active;
    const Step* step = nullptr;  // the in-process step; nullptr: the wind-up
    StepResult result;
    Facts facts;
    std::vector<std::string> filed;
    bool output_dir = false;
  };

  // runner.cpp: starting cells and running their steps.
  void start_granted();
  void start(const Grant& g);
  void begin(const Grant& g);
  void run_steps(Active active);
  void start_early(const Active& active);
  bool take_turn(Active& active, const Step& step);
  void start_inline(Active active, const Step& step);
  void start_process(Active active, const Step& step);
  void collect_work();
  void step_succeeded(Active active, const Step& step);
  void finish(ProcessSupervisor::Id id, const ExitStatus& status);
  void process_ended(Active active, ExitStatus status);
  // A failed step: the cell goes back to the step its retry names (true), or not (false).
  bool go_back(Active& active, const std::string& step, const std::string& message);
  void cancel_early(std::size_t cell);
  [[nodiscard]] std::chrono::milliseconds time_left(const Active& active) const;
  [[nodiscard]] std::chrono::milliseconds since_origin() const;

  // run_loop_output.cpp: the status line, progress tenths, and processes' output.
  void tick();
  // Asks each running cell with a progress how far it is; says each tenth once.
  std::string how_far(std::size_t cell, int slots);
  // A chunk of a process's output as the supervisor reads it: kept where it is needed (the facts
  // of a step that reports them, a cleanup's), and with -v, a step's lines on the status printer.
  void output(ProcessSupervisor::Id id, std::string_view chunk);
  void stream(Active& active, std::string_view chunk);

  // run_loop_claim.cpp: cells that make a shared cache entry (EntryClaim).
  [[nodiscard]] bool claimed(const Grant& g, bool first);
  void retry_claims();
  [[nodiscard]] bool made_meanwhile(const Active& active);
  // "fabuild: <text>" at the end of the cell's log, through files_.
  void log_line(const CellRun& cell, std::string_view text);

  // run_loop_end.cpp: a cell's end, and stopping.
  void end_cell(const Active& active, const ExitStatus& status, const std::string& step, const std::string& message);
  void cleaned(const Active& active, const ExitStatus& status);
  void wind_up(const Active& active);
  void finish_cell(const Pending& done);
  void handle_interrupts();
  void stop();
  [[nodiscard]] std::chrono::milliseconds max_grace() const;

  const std::vector<CellRun>& cells_;
  const RunSettings& settings_;
  ProcessSupervisor& sup_;
  Files& files_;
  StatusPrinter& status_;
  Scheduler scheduler_;
  RunReport report_;
  std::map<std::size_t, int> tenths_said_;  // by cell: the last tenth of its progress said
  Progress progress_;
  Clock::time_point origin_;
  std::map<ProcessSupervisor::Id, Active> active_;    // cells in a process step
  std::map<ProcessSupervisor::Id, Active> cleaning_;  // cells whose cleanup runs
  std::map<ProcessSupervisor::Id, Early> early_;      // steps started early, before their turn
  std::vector<Grant> waiting_;                        // granted cells waiting for their entry's claim
  std::map<std::size_t, HolderLock> claims_;          // the claims held, by cell
  std::map<std::size_t, Active> resuming_;            // gone back past their share: waiting for one
  std::map<std::size_t, Pending> pending_;            // what the workers' jobs leave, by cell...
  Workers workers_{sup_};                             // ...declared after it: joined before it goes
  bool stopping_ = false;
  int interrupts_seen_ = 0;
};

}  // namespace fabuild::engine
