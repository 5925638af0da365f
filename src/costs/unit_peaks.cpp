#include "costs/unit_peaks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace fabuild {

std::optional<KernelPeaks> kernel_peaks(const RowCosts& costs, int nvcc_threads) {
  std::vector<double> mb;
  for (const auto& [unit, cost] : costs.units) {
    if (unit.ends_with(".cu") && cost.peak_mb > 0) mb.push_back(peak_mb_at(unit, cost, nvcc_threads));
  }
  if (mb.empty()) return std::nullopt;
  std::sort(mb.begin(), mb.end());
  const std::size_t n = mb.size();
  const double median = n % 2 == 1 ? mb[n / 2] : (mb[n / 2 - 1] + mb[n / 2]) / 2;
  return KernelPeaks{mb.front(), median, mb.back(), n};
}

bool gate_applies(const Cell& cell) {
  return cell.command().empty() && !cell.library() && !cell.rocm() && cell.platform != Platform::kWinAmd64 &&
         !cell.build().max_jobs;
}

int gate_slots(const KernelPeaks& peaks, double cores, double memory_gb, int nvcc_threads) {
  const double by_cores = std::max(1.0, std::floor(cores / std::max(1, nvcc_threads)));
  const double by_memory = std::floor(memory_gb * 1024 / std::max(peaks.smallest_mb, 1.0));
  return static_cast<int>(std::max(1.0, std::min(by_cores, by_memory)));
}

void gate_by_recorded_peaks(JobSettings& shape, const KernelPeaks& peaks, const Budget& budget) {
  const double smallest_gb = peaks.smallest_mb / 1024;
  // The most compiles that could ever run at once share all the memory: the grant is the
  // memory the gate packs.
  const int most = gate_slots(peaks, budget.cores, budget.memory_gb, shape.nvcc_threads);
  shape.gb_per_job = std::max(smallest_gb, budget.memory_gb / most);
  shape.memory_gate = true;
  shape.notes.push_back(fmt::format(
      "memory by recorded peaks: {} kernels of {:.1f}-{:.1f} GB (median {:.1f}); {:.1f} GB a job, each compile "
      "starting when its own peak fits in the cell's grant",
      peaks.count, smallest_gb, peaks.largest_mb / 1024, peaks.median_mb / 1024, shape.gb_per_job));
}

objcache::UnitPeaks unit_peaks_for(const RowCosts& costs, const std::filesystem::path& tree, int nvcc_threads) {
  objcache::UnitPeaks peaks;
  double largest = 0;
  for (const auto& [unit, cost] : costs.units) {
    if (cost.peak_mb <= 0) continue;
    const double at = peak_mb_at(unit, cost, nvcc_threads);
    const std::string path = (tree / unit).lexically_normal().string();
    peaks.mb[path] = static_cast<std::uint64_t>(std::ceil(at));
    peaks.seconds[path] = static_cast<std::uint64_t>(std::ceil(cost.cpu_s));
    largest = std::max(largest, at);
  }
  peaks.other_mb = static_cast<std::uint64_t>(std::ceil(largest));
  return peaks;
}

std::optional<double> gated_kernel_seconds(const RowCosts& costs, int nvcc_threads, double cores, double memory_gb,
                                           const std::vector<std::string>* built) {
  const auto peaks = kernel_peaks(costs, nvcc_threads);
  if (!peaks) return std::nullopt;
  using Unit = GatedUnit;
  const double threads = std::max(1, nvcc_threads);
  const auto recorded = [&](const std::string& unit, const UnitCost& cost) {
    return Unit{cost.cpu_s / threads, static_cast<std::uint64_t>(std::ceil(peak_mb_at(unit, cost, nvcc_threads))),
                static_cast<std::uint64_t>(std::ceil(cost.cpu_s))};
  };
  std::vector<Unit> units;  // in the order ninja would hand them out
  if (built == nullptr) {
    for (const auto& [unit, cost] : costs.units) {
      if (unit.ends_with(".cu") && cost.peak_mb > 0) units.push_back(recorded(unit, cost));
    }
  } else {
    const double mean = costs.kernel_mean_cpu_s().value_or(0);  // as the split takes it (split_units)
    for (const std::string& unit : *built) {
      const auto it = costs.units.find(unit);
      units.push_back(it != costs.units.end() && it->second.peak_mb > 0
                          ? recorded(unit, it->second)
                          : Unit{mean / threads, static_cast<std::uint64_t>(std::ceil(peaks->largest_mb)), 0});
    }
  }
  const int slots = gate_slots(*peaks, cores, memory_gb, nvcc_threads);
  return gate_schedule(units, slots, static_cast<std::uint64_t>(memory_gb * 1024),
                       static_cast<std::size_t>(kGateWindow * slots));
}

double gate_schedule(const std::vector<GatedUnit>& units, int slots, std::uint64_t budget_mb, std::size_t window) {
  window = std::max<std::size_t>(1, window);
  const auto ticket = [&](std::size_t i) {
    return objcache::GateTicket{fmt::format("w-{:08}", i), units[i].mb, units[i].priority};
  };
  std::vector<std::pair<double, std::uint64_t>> running;  // (end, MB)
  std::vector<std::size_t> waiting;
  double now = 0;
  double end = 0;
  std::size_t next = 0;
  while (next < units.size() || !waiting.empty() || !running.empty()) {
    while (next < units.size() && waiting.size() + running.size() < window) waiting.push_back(next++);
    for (bool started = true; started;) {  // what the gate starts now, one at a time
      started = false;
      objcache::GateState state;
      state.leases = static_cast<int>(running.size());
      for (const auto& r : running) state.held_mb += r.second;
      for (std::size_t i : waiting) state.waiting.push_back(ticket(i));
      for (auto w = waiting.begin(); w != waiting.end(); ++w) {
        const objcache::GateRequest request{
            .budget_mb = budget_mb, .need_mb = units[*w].mb, .slots = slots, .priority = units[*w].priority};
        if (objcache::gate_admits(state, ticket(*w), request)) {
          running.emplace_back(now + units[*w].seconds, units[*w].mb);
          waiting.erase(w);
          started = true;
          break;
        }
      }
    }
    const auto first = std::min_element(running.begin(), running.end());
    now = first->first;
    end = std::max(end, now);
    running.erase(first);
  }
  return end;
}

}  // namespace fabuild
