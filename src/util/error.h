#pragma once

#include <stdexcept>
#include <string>

#include "util/exit_code.h"
#include "util/expected.h"

namespace fabuild {

// Where a value came from: a file position (1-based line and column), or a command-line flag.
struct Location {
  std::string file;  // matrix file path, or "" for command-line input
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown

  [[nodiscard]] bool known() const { return line > 0; }
  // "matrix.yaml:3:7", "matrix.yaml", or "" as far as known.
  [[nodiscard]] std::string str() const;
};

// An error a user can fix: what was wrong, where, and what to do. Thrown by lower layers,
// caught once in main, printed as "fabuild: error: <where>: <message>" plus "  hint: <hint>".
class UserError : public std::runtime_error {
 public:
  UserError(ExitCode code, Location where, std::string message, std::string hint = {});

  [[nodiscard]] ExitCode code() const { return code_; }
  [[nodiscard]] const Location& where() const { return where_; }
  [[nodiscard]] const std::string& message() const { return message_; }
  [[nodiscard]] const std::string& hint() const { return hint_; }

 private:
  ExitCode code_;
  Location where_;
  std::string message_;
  std::string hint_;
};

// Messages quote what users (and attackers) wrote: a matrix value, an archive entry, a file
// name. Control characters in them must not reach a terminal raw — an escape sequence could
// rewrite the screen, a newline forge a line of fabuild's own output — so each is shown as an
// escape: "\n", "\x1b". UTF-8 C1 controls (U+0080..U+009F) too; other text is kept. A message
// may go on over indented lines (a list of conflicts): a newline followed by a space stays.
// UserError's parts go through it; so does a Failure's text that quotes such input.
std::string printable(std::string text);

// Bad matrix file or bad flags: exit 2.
inline UserError config_error(Location where, std::string message, std::string hint = {}) {
  return UserError(kExitBadConfig, std::move(where), std::move(message), std::move(hint));
}

// What an exception says, as a Failure: a UserError's message with its hint, another's what().
// The runner turns what an in-process step's call throws into the step's failure with it
// (engine/runner.cpp), so a step need not catch only to say the same.
Failure failure_of(const std::exception& e);

// The other way: a Failure where the caller's contract is to throw (a command that stops), as
// the UserError that prints it the same ("what", "  hint: ...").
UserError user_error_of(const Failure& f, ExitCode code = kExitCellFailed);

}  // namespace fabuild
