#include "util/byte_size.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace fabuild {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) != 0 || text[end] == '.')) ++end;
  if (end == 0) return std::nullopt;
  double number = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, number);
  if (ec != std::errc() || ptr != text.data() + end) return std::nullopt;
  std::string unit(text.substr(end));
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "K" || unit == "KB") scale = 1e3;
  if (unit == "M" || unit == "MB") scale = 1e6;
  if (unit == "G" || unit == "GB") scale = 1e9;
  if (unit == "T" || unit == "TB") scale = 1e12;
  if (unit == "KI" || unit == "KIB") scale = 1024.0;
  if (unit == "MI" || unit == "MIB") scale = 1024.0 * 1024;
  if (unit == "GI" || unit == "GIB") scale = 1024.0 * 1024 * 1024;
  if (unit == "TI" || unit == "TIB") scale = 1024.0 * 1024 * 1024 * 1024;
  if (scale == 0) return std::nullopt;
  const double bytes = std::round(number * scale);
  if (!(bytes >= 0) || bytes > 1.8e19) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 999.5 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.{}f} {}", value, value < 9.95 ? 1 : 0, units[unit]);
}

}  // namespace fabuild
