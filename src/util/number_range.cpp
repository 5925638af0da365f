#include "util/number_range.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "util/text.h"

namespace fabuild {

namespace {

// 65536, 0.1, 1048576: a bound as a person writes it ({:g} would say 1.04858e+06).
std::string plain(double v) {
  std::string text = fmt::format("{:.6f}", v);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

std::string number_complaint(std::string_view text, const NumberRange& range) {
  const std::string shown = trim(text);
  const std::optional<double> number = parse_number(text);
  if (!number) return fmt::format("takes {} number, not '{}'", range.whole ? "a whole" : "a", shown);
  const double v = *number;
  if (!std::isfinite(v)) return fmt::format("takes a finite number, not '{}'", shown);
  if (range.whole && v != std::floor(v)) return fmt::format("takes a whole number, not {}", shown);
  if (v < range.least) return fmt::format("must be at least {}, not {}", plain(range.least), shown);
  if (v > range.most) return fmt::format("must be at most {}, not {}", plain(range.most), shown);
  return {};
}

}  // namespace fabuild
