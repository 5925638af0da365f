#include "engine/status.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace fabuild {

namespace {

std::string counts(const Progress& p) {
  std::string s = fmt::format("[{}/{} done · {} running", p.done, p.total, p.running);
  if (p.failed > 0) s += fmt::format(" · {} failed", p.failed);
  return s + "]";
}

class Printer : public StatusPrinter {
 public:
  Printer(std::ostream& out, bool terminal) : out_(out), terminal_(terminal) {}

  void started(const CellOutcome& cell, const Progress& p) override {
    line(fmt::format("{} start {} (MAX_JOBS={}{})", counts(p), cell.id, cell.max_jobs,
                     cell.nvcc_threads > 0 ? fmt::format(" NVCC_THREADS={}", cell.nvcc_threads) : std::string()));
  }

  void finished(const CellOutcome& cell, const std::vector<std::string>& log_tail, const Progress& p) override {
    if (cell.result == CellResult::kOk) {
      std::string where = !cell.filed.empty()       ? fmt::format("{} file{} in {}", cell.filed.size(),
                                                            cell.filed.size() == 1 ? "" : "s", cell.output_dir)
                          : cell.output_dir.empty() ? std::string("no outputs")
                                                    : "in " + cell.output_dir;
      line(fmt::format("{} ok {} {} ({})", counts(p), cell.id, clock_time(cell.elapsed), where));
      return;
    }
    if (cell.result == CellResult::kCancelled) {
      line(fmt::format("{} cancelled {} after {} ({})", counts(p), cell.id, clock_time(cell.elapsed),
                       what_happened(cell)));
      return;
    }
    // A cell that failed before it ran (no image, no toolkit) has no log and took no time.
    const bool ran = !cell.log_path.empty();
    std::string block = fmt::format("FAILED: [code={}] {} ({}{})", cell.status.exit_code(), cell.id,
                                    what_happened(cell), ran ? " after " + clock_time(cell.elapsed) : std::string());
    for (const auto& l : log_tail) block += "\n  | " + l;
    if (ran) block += fmt::format("\n  log: {}", cell.log_path);
    line(block);
  }

  void tick(const Progress& p, const std::string& oldest, std::chrono::milliseconds elapsed,
            const std::string& how_far) override {
    if (!terminal_) return;
    status_ = fmt::format("{} {} {}{}", counts(p), oldest, clock_time(elapsed), how_far.empty() ? "" : " · " + how_far);
    fmt::print(out_, "\r\033[K{}", status_);
    out_.flush();
  }

  void output(const std::string& id, std::string_view text) override { line(fmt::format("[{}] {}", id, text)); }

  void note(const std::string& text) override { line("fabuild: " + text); }

  void progressed(const std::string& id, const CellProgress& progress) override {
    if (terminal_) return;  // the status line says it
    line(fmt::format("fabuild: {}: {}% · {}", id, progress.tenths * 10, progress.text));
  }

  void summary(const std::vector<CellOutcome>& cells, std::chrono::milliseconds elapsed) override {
    clear_status();
    status_.clear();
    std::size_t width = 4;
    for (const auto& c : cells) width = std::max(width, c.id.size());
    fmt::print(out_, "\n{:<{}}  {:<10}  {:>7}  {}\n", "CELL", width, "RESULT", "TIME", "OUTPUT OR LOG");
    std::map<CellResult, int> tally;
    for (const auto& c : cells) {
      ++tally[c.result];
      std::string where = c.result == CellResult::kOk || c.result == CellResult::kUpToDate
                              ? (c.output_dir.empty() ? "-" : c.output_dir)
                          : c.result == CellResult::kNotRun ? "-"
                                                            : c.log_path;
      const bool ran = c.result != CellResult::kNotRun && c.result != CellResult::kUpToDate;
      fmt::print(out_, "{:<{}}  {:<10}  {:>7}  {}\n", c.id, width, to_string(c.result),
                 ran ? clock_time(c.elapsed) : "-", where);
    }
    std::vector<std::string> parts;
    for (const auto r : {CellResult::kOk, CellResult::kUpToDate, CellResult::kFailed, CellResult::kTimedOut,
                         CellResult::kCancelled, CellResult::kNotRun}) {
      if (tally[r] > 0) parts.push_back(fmt::format("{} {}", tally[r], to_string(r)));
    }
    fmt::print(out_, "{} in {}\n", fmt::join(parts, ", "), clock_time(elapsed));
    out_.flush();
  }

 private:
  void clear_status() {
    if (terminal_ && !status_.empty()) fmt::print(out_, "\r\033[K");
  }
  // A permanent line: on a terminal, printed over the status line, which is then redrawn.
  void line(const std::string& text) {
    clear_status();
    fmt::print(out_, "{}\n", text);
    if (terminal_ && !status_.empty()) fmt::print(out_, "{}", status_);
    out_.flush();
  }

  std::ostream& out_;
  bool terminal_;
  std::string status_;
};

}  // namespace

std::unique_ptr<StatusPrinter> make_status_printer(std::ostream& out, bool terminal) {
  return std::make_unique<Printer>(out, terminal);
}

}  // namespace fabuild
