#include "util/windows_command_line.h"

#include <algorithm>
#include <cctype>

namespace fabuild {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool is_cmd(const std::string& program) {
  const auto slash = program.find_last_of("/\\");
  const std::string name = lower(slash == std::string::npos ? program : program.substr(slash + 1));
  return name == "cmd" || name == "cmd.exe";
}

}  // namespace

std::string quote_windows_argument(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n\v\"") == std::string::npos) return arg;
  std::string out = "\"";
  std::size_t backslashes = 0;
  for (const char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    // Backslashes are literal unless a quote follows them: then each is doubled, and the
    // quote escaped with one more.
    out.append(c == '"' ? backslashes * 2 + 1 : backslashes, '\\');
    backslashes = 0;
    out += c;
  }
  out.append(backslashes * 2, '\\');  // before the closing quote
  out += '"';
  return out;
}

std::string windows_command_line(const std::vector<std::string>& argv) {
  if (argv.empty()) return {};
  // The program name is split differently (no backslash escapes, up to the next quote), and a
  // Windows file name cannot hold a quote: quotes around it are enough.
  std::string line =
      argv[0].find_first_of(" \t") == std::string::npos && !argv[0].empty() ? argv[0] : "\"" + argv[0] + "\"";
  const bool cmd = is_cmd(argv[0]);
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string flag = lower(argv[i]);
    if (cmd && (flag == "/c" || flag == "/k")) {
      line += " " + argv[i];
      std::string command;
      for (std::size_t j = i + 1; j < argv.size(); ++j) command += (j == i + 1 ? "" : " ") + argv[j];
      return line + " \"" + command + "\"";
    }
    line += " " + quote_windows_argument(argv[i]);
  }
  return line;
}

}  // namespace fabuild
