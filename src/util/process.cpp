#include "util/process.h"

#include <csignal>

#include <fmt/format.h>

#include "util/signals.h"

namespace fabuild {

int ExitStatus::exit_code() const {
  if (kind == Kind::kSpawnFailed) return 127;
  if (signal != 0) return 128 + signal;
  // Stopped by our SIGTERM yet exited 0: still not a success.
  if (kind != Kind::kExited && code == 0) return 128 + SIGTERM;
  return code;
}

std::string ExitStatus::describe() const {
  if (kind == Kind::kSpawnFailed) return "failed to start: " + error;
  std::string text = signal == 0 ? fmt::format("exit {}", code)
                                 : fmt::format("killed by {} ({})", signal_name(signal), 128 + signal);
  if (kind == Kind::kTimedOut) text = fmt::format("timed out after {:g}s, {}", timeout.count() / 1000.0, text);
  if (kind == Kind::kCancelled) text = "cancelled, " + text;
  return error.empty() ? text : fmt::format("{} ({})", text, error);
}

}  // namespace fabuild
