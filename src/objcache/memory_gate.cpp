#include "objcache/memory_gate.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <string_view>
#include <utility>
#include <vector>

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

std::uint64_t UnitPeaks::seconds_of(const std::string& source) const {
  const auto it = seconds.find(source);
  return it != seconds.end() ? it->second : other_seconds;
}

namespace {

// A whole field as a number; nullopt when it is not one.
std::optional<std::uint64_t> number(std::string_view field) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || ec != std::errc() || ptr != field.data() + field.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<UnitPeaks> parse_unit_peaks(const std::string& text) {
  UnitPeaks peaks;
  bool other = false;
  std::string_view rest(text);
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.empty()) continue;
    // "<MB>\t<seconds>\t<path>"; a file of an earlier fabuild: "<MB>\t<path>". A path is
    // absolute or "*", so a second field that is a number is the seconds.
    const auto tab = line.find('\t');
    if (tab == std::string_view::npos || tab + 1 == line.size()) return std::nullopt;
    const auto mb = number(line.substr(0, tab));
    if (!mb) return std::nullopt;
    std::string_view path = line.substr(tab + 1);
    std::uint64_t secs = 0;
    if (const auto second = path.find('\t'); second != std::string_view::npos) {
      const auto s = number(path.substr(0, second));
      if (!s || second + 1 == path.size()) return std::nullopt;
      secs = *s;
      path = path.substr(second + 1);
    }
    if (path == "*") {
      peaks.other_mb = *mb;
      peaks.other_seconds = secs;
      other = true;
    } else {
      peaks.mb[std::string(path)] = *mb;
      if (secs > 0) peaks.seconds[std::string(path)] = secs;
    }
  }
  if (!other) return std::nullopt;
  return peaks;
}

std::string write_unit_peaks(const UnitPeaks& peaks) {
  std::string out = std::to_string(peaks.other_mb) + "\t" + std::to_string(peaks.other_seconds) + "\t*\n";
  for (const auto& [path, value] : peaks.mb) {
    out += std::to_string(value) + "\t" + std::to_string(peaks.seconds_of(path)) + "\t" + path + "\n";
  }
  return out;
}

bool gate_admits(const GateState& state, const GateTicket& me, const GateRequest& request) {
  if (request.slots > 0 && state.leases >= request.slots) return false;
  // Every waiting compile, `me` among them, by priority (longest first), then arrival.
  std::vector<const GateTicket*> order;
  bool listed = false;
  for (const GateTicket& t : state.waiting) {
    order.push_back(&t);
    listed |= t.name == me.name;
  }
  if (!listed) order.push_back(&me);
  std::stable_sort(order.begin(), order.end(), [](const GateTicket* a, const GateTicket* b) {
    return a->priority != b->priority ? a->priority > b->priority : a->name < b->name;
  });
  for (const GateTicket* t : order) {
    if (state.leases == 0 || state.held_mb + t->need_mb <= request.budget_mb) return t->name == me.name;
  }
  return false;
}

MemoryLease enter_gate(const GateSpec& gate, const std::string& source, std::uint64_t* waited_ms, std::string* note) {
  if (waited_ms != nullptr) *waited_ms = 0;
  if (gate.dir.empty() || gate.budget_mb == 0) return {};
  const auto text = read_whole(gate.peaks_file);
  const auto peaks = text ? parse_unit_peaks(*text) : std::nullopt;
  GateRequest request;
  request.budget_mb = gate.budget_mb;
  request.need_mb = peaks ? peaks->of(source) : gate.budget_mb;
  request.slots = gate.slots;
  request.priority = peaks ? peaks->seconds_of(source) : 0;
  try {
    return MemoryLease::acquire(gate.dir, request, waited_ms);
  } catch (const std::exception& e) {
    if (note != nullptr) *note = std::string("no memory gate: ") + e.what();
    return {};
  }
}

}  // namespace fabuild::objcache
