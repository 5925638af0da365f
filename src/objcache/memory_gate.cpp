#include "objcache/memory_gate.h"

#include <charconv>
#include <exception>
#include <string_view>
#include <utility>

#include "util/read_whole.h"

namespace fabuild::objcache {

MemoryLease::MemoryLease(MemoryLease&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

MemoryLease& MemoryLease::operator=(MemoryLease&& other) noexcept {
  std::swap(fd_, other.fd_);
  std::swap(path_, other.path_);
  return *this;
}

std::uint64_t UnitPeaks::of(const std::string& source) const {
  const auto it = mb.find(source);
  return it != mb.end() ? it->second : other_mb;
}

std::optional<UnitPeaks> parse_unit_peaks(const std::string& text) {
  UnitPeaks peaks;
  bool other = false;
  std::string_view rest(text);
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.empty()) continue;
    const auto tab = line.find('\t');
    if (tab == std::string_view::npos || tab + 1 == line.size()) return std::nullopt;
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + tab, value);
    if (ec != std::errc() || ptr != line.data() + tab) return std::nullopt;
    const std::string path(line.substr(tab + 1));
    if (path == "*") {
      peaks.other_mb = value;
      other = true;
    } else {
      peaks.mb[path] = value;
    }
  }
  if (!other) return std::nullopt;
  return peaks;
}

std::string write_unit_peaks(const UnitPeaks& peaks) {
  std::string out = std::to_string(peaks.other_mb) + "\t*\n";
  for (const auto& [path, value] : peaks.mb) out += std::to_string(value) + "\t" + path + "\n";
  return out;
}

MemoryLease enter_gate(const GateSpec& gate, const std::string& source, std::uint64_t* waited_ms, std::string* note) {
  if (waited_ms != nullptr) *waited_ms = 0;
  if (gate.dir.empty() || gate.budget_mb == 0) return {};
  const auto text = read_whole(gate.peaks_file);
  const auto peaks = text ? parse_unit_peaks(*text) : std::nullopt;
  const std::uint64_t need = peaks ? peaks->of(source) : gate.budget_mb;
  try {
    return MemoryLease::acquire(gate.dir, gate.budget_mb, need, waited_ms);
  } catch (const std::exception& e) {
    if (note != nullptr) *note = std::string("no memory gate: ") + e.what();
    return {};
  }
}

}  // namespace fabuild::objcache
