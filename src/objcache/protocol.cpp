#include "objcache/protocol.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace fabuild::objcache {

namespace {

std::string one_field(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
}

template <class T>
std::optional<T> number(std::string_view s) {
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string write_tally_line(const TallyLine& l) {
  const auto cost = [](const std::optional<std::uint64_t>& v) { return std::to_string(v.value_or(0)); };
  std::string line = one_field(l.outcome) + "\t" + std::to_string(l.bytes) + "\t" + one_field(l.source) + "\t" +
                     one_field(l.detail) + "\t" + one_field(l.manifest_key) + "\t" + one_field(l.result_key) + "\t" +
                     cost(l.wall_ms) + "\t" + cost(l.cpu_ms) + "\t" + cost(l.peak_kb) + "\t" +
                     std::to_string(l.gate_wait_ms) + "\t" + std::to_string(l.busy_pct);
  return line + "\n";
}

std::optional<TallyLine> parse_tally_line(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::vector<std::string_view> f;
  for (std::size_t start = 0;;) {
    const std::size_t tab = text.find('\t', start);
    f.push_back(text.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (f.size() < 2) return std::nullopt;
  TallyLine l;
  l.outcome = std::string(f[0]);
  const auto bytes = number<std::uint64_t>(f[1]);
  if (!bytes) return std::nullopt;
  l.bytes = *bytes;
  if (f.size() > 2) l.source = std::string(f[2]);
  if (f.size() > 3) l.detail = std::string(f[3]);
  if (f.size() >= 6) {
    l.manifest_key = std::string(f[4]);
    l.result_key = std::string(f[5]);
  }
  if (f.size() >= 9) {
    const auto wall = number<std::uint64_t>(f[6]), cpu = number<std::uint64_t>(f[7]),
               peak = number<std::uint64_t>(f[8]);
    if (wall && cpu && peak) {
      l.wall_ms = wall;
      l.cpu_ms = cpu;
      l.peak_kb = peak;
    }
  }
  if (f.size() >= 10) l.gate_wait_ms = number<std::int64_t>(f[9]).value_or(-1);
  if (f.size() >= 11) {
    const auto busy = number<int>(f[10]);
    l.busy_pct = busy && *busy >= 0 && *busy <= 100 ? *busy : -1;
  }
  return l;
}

}  // namespace fabuild::objcache
