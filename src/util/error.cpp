#include "util/error.h"

#include <fmt/format.h>

namespace fabuild {

std::string Location::str() const {
  if (file.empty()) return {};
  if (line <= 0) return file;
  if (column <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

std::string printable(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (c == '\n' && i + 1 < text.size() && text[i + 1] == ' ') {
      out += '\n';
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c1) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[++i]));
    } else {
      out += text[i];
    }
  }
  // A megabyte value quoted in a message is no help to anyone reading it.
  constexpr std::size_t kMaxShown = 16384;
  if (out.size() > kMaxShown)
    out = fmt::format("{}... ({} more bytes)", out.substr(0, kMaxShown), out.size() - kMaxShown);
  return out;
}

namespace {

std::string compose(const Location& where, const std::string& message) {
  const std::string at = where.str();
  return at.empty() ? message : at + ": " + message;
}
}  // namespace

UserError::UserError(ExitCode code, Location where, std::string message, std::string hint)
    : std::runtime_error(compose(Location{printable(where.file), where.line, where.column}, printable(message))),
      code_(code),
      where_(std::move(where)),
      message_(printable(std::move(message))),
      hint_(printable(std::move(hint))) {
  where_.file = printable(std::move(where_.file));
}

UserError user_error_of(const Failure& f, ExitCode code) { return UserError(code, Location{}, f.what, f.hint); }

Failure failure_of(const std::exception& e) {
  if (const auto* user = dynamic_cast<const UserError*>(&e)) return Failure{user->what(), user->hint()};
  return Failure{e.what(), {}};
}

}  // namespace fabuild
