// Cells that make a shared cache entry (runner.h, EntryClaim): taking the entry's make lock
// before the cell's first step, waiting for it beside the other cells, and a cell with nothing
// left to do because the holder before it made the entry.

#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "engine/run_loop.h"
#include "util/entry_lock.h"

namespace fabuild::engine {

// Whether the cell may start: it claims no entry, holds its claim now, or the run is stopping
// (it is then cancelled before its first step). `first`: its first try, which says whom it
// waits for.
bool RunLoop::claimed(const Grant& g, bool first) {
  const CellRun& cell = cells_[g.cell];
  if (!cell.claim || stopping_) return true;
  const std::filesystem::path file = entry_make_lock(cell.claim->entry);
  Expected<std::optional<HolderLock>> lock = HolderLock::try_take(file, cell.claim->what);
  if (!lock) {
    // A cache where no lock file can be made: its steps will say what is wrong with it.
    status_.note(fmt::format("{}: {}; going on without its lock", cell.id, lock.error().what));
    return true;
  }
  if (!*lock) {
    if (first) status_.note(fmt::format("{}: waiting for {}", cell.id, current_lock_holder(file).describe()));
    return false;
  }
  claims_.emplace(g.cell, std::move(**lock));
  return true;
}

void RunLoop::retry_claims() {
  std::vector<Grant> still;
  for (const Grant& g : std::exchange(waiting_, {})) {
    if (claimed(g, false)) {
      begin(g);
    } else {
      still.push_back(g);
    }
  }
  waiting_.insert(waiting_.end(), still.begin(), still.end());
}

// The entry was made by the process that held its claim before this cell.
bool RunLoop::made_meanwhile(const Active& active) {
  const CellRun& cell = cells_[active.cell];
  if (claims_.count(active.cell) == 0 || !cell.claim->ready || !cell.claim->ready()) return false;
  log_line(cell, cell.claim->entry + " was made meanwhile by another process: nothing to do");
  return true;
}

}  // namespace fabuild::engine
