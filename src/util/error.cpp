#include "util/error.h"

#include <fmt/format.h>

namespace fabuild {

std::string Location::str() const {
  if (file.empty()) return {};
  if (line <= 0) return file;
  if (column <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

namespace {
std::string compose(const Location& where, const std::string& message) {
  const std::string at = where.str();
  return at.empty() ? message : at + ": " + message;
}
}  // namespace

UserError::UserError(ExitCode code, Location where, std::string message, std::string hint)
    : std::runtime_error(compose(where, message)),
      code_(code),
      where_(std::move(where)),
      message_(std::move(message)),
      hint_(std::move(hint)) {}

}  // namespace fabuild
