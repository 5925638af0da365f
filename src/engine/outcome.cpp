#include "engine/outcome.h"

#include <fmt/format.h>

namespace fabuild {

std::string to_string(CellResult r) {
  switch (r) {
    case CellResult::kOk:
      return "ok";
    case CellResult::kFailed:
      return "FAILED";
    case CellResult::kTimedOut:
      return "TIMEOUT";
    case CellResult::kCancelled:
      return "cancelled";
    case CellResult::kNotRun:
      return "not run";
    case CellResult::kUpToDate:
      return "up to date";
  }
  return "?";
}

std::string clock_time(std::chrono::milliseconds elapsed) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string what_happened(const CellOutcome& cell) {
  const std::string what = cell.message.empty() ? cell.status.describe() : cell.message;
  return cell.step.empty() ? what : cell.step + ": " + what;
}

}  // namespace fabuild
