// What the loop (run_loop.h) says while cells run: the status line with the oldest cell's
// progress, a line at each tenth of a cell's compile, and its processes' output, kept for what
// reads it (facts, a cleanup's message) and streamed line by line under -v.

#include <optional>
#include <set>

#include "engine/run_loop.h"

namespace fabuild::engine {

using std::chrono::milliseconds;

namespace {

// How much of a process's output is kept for what reads it.
constexpr std::size_t kFactOutput = 1 << 20;  // a step that reports facts
constexpr std::size_t kCleanupOutput = 64 * 1024;

}  // namespace

void RunLoop::tick() {
  std::optional<std::pair<std::size_t, Clock::time_point>> oldest;
  for (const auto& [id, a] : active_) {
    if (!oldest || a.started < oldest->second) oldest = {a.cell, a.started};
  }
  if (!oldest) return;
  std::string oldest_how_far;
  std::set<std::size_t> asked;
  for (const auto& [id, a] : active_) {
    if (!asked.insert(a.cell).second) continue;
    std::string text = how_far(a.cell, a.jobs);
    if (a.cell == oldest->first) oldest_how_far = std::move(text);
  }
  status_.tick(progress_, cells_[oldest->first].id,
               std::chrono::duration_cast<milliseconds>(Clock::now() - oldest->second), oldest_how_far);
}

std::string RunLoop::how_far(std::size_t cell, int slots) {
  if (!cells_[cell].progress) return "";
  const CellProgress p = cells_[cell].progress(slots);
  if (p.tenths >= 0) {
    auto [it, added] = tenths_said_.try_emplace(cell, 0);
    if (p.tenths > it->second) {
      it->second = p.tenths;
      status_.progressed(cells_[cell].id, p);
    }
  }
  return p.text;
}

void RunLoop::output(ProcessSupervisor::Id id, std::string_view chunk) {
  // The end of a process's own output (its log holds it whole, and whatever else the cell's
  // other processes wrote meanwhile).
  const auto keep = [chunk](std::string& kept, std::size_t most) {
    kept.append(chunk);
    if (kept.size() > most) kept.erase(0, kept.size() - most);
  };
  if (const auto it = active_.find(id); it != active_.end()) {
    Active& active = it->second;
    if (cells_[active.cell].steps[active.step].reports_facts) keep(active.output, kFactOutput);
    if (settings_.stream_output) stream(active, chunk);
  } else if (const auto ending = cleaning_.find(id); ending != cleaning_.end()) {
    keep(ending->second.output, kCleanupOutput);
  }
}

void RunLoop::stream(Active& active, std::string_view chunk) {
  std::string& partial = active.partial_line;
  partial.append(chunk);
  std::size_t start = 0;
  for (std::size_t nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', start)) {
    status_.output(cells_[active.cell].id, std::string_view(partial).substr(start, nl - start));
    start = nl + 1;
  }
  partial.erase(0, start);
}

}  // namespace fabuild::engine
