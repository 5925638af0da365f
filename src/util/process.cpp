#include "util/process.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <string_view>

#include <fmt/format.h>

namespace fabuild {

int ExitStatus::exit_code() const {
  if (kind == Kind::kSpawnFailed) return 127;
  if (signal != 0) return 128 + signal;
  // Stopped by our SIGTERM yet exited 0: still not a success.
  if (kind != Kind::kExited && code == 0) return 128 + SIGTERM;
  return code;
}

std::string environment_for_log(const std::vector<std::string>& env) {
  static constexpr std::array<std::string_view, 8> kSecretWords = {
      "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY"};
  std::string line;
  for (const std::string& entry : env) {
    if (!line.empty()) line += ' ';
    const std::size_t eq = entry.find('=');
    std::string name = entry.substr(0, eq);
    std::ranges::transform(name, name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const bool secret = eq != std::string::npos && std::ranges::any_of(kSecretWords, [&](std::string_view word) {
                          return name.find(word) != std::string::npos;
                        });
    line += secret ? entry.substr(0, eq + 1) + "***" : entry;
  }
  return line;
}

std::string ExitStatus::describe() const {
  if (kind == Kind::kSpawnFailed) return "failed to start: " + error;
  std::string text;
  if (signal != 0) {
    text = fmt::format("killed by {} ({})", signal_name(signal), 128 + signal);
  } else if (terminated) {
    text = fmt::format("terminated with its job (exit {})", code);
  } else if (kind == Kind::kSignaled) {  // Windows: an exception ended it (no signal there)
    text = fmt::format("crashed: exception 0x{:08X}", static_cast<unsigned>(code));
  } else {
    // Windows' NTSTATUS values (0xC000013A: ended by Ctrl-C) read best in hex.
    text = code < 0 ? fmt::format("exit 0x{:08X}", static_cast<unsigned>(code)) : fmt::format("exit {}", code);
  }
  if (kind == Kind::kTimedOut) text = fmt::format("timed out after {:g}s, {}", timeout.count() / 1000.0, text);
  if (kind == Kind::kCancelled) text = "cancelled, " + text;
  return error.empty() ? text : fmt::format("{} ({})", text, error);
}

}  // namespace fabuild
