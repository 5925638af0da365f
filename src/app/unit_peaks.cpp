#include "app/unit_peaks.h"

#include <algorithm>
#include <cmath>

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
  return cell.command().empty() && !cell.library() && !cell.rocm() && cell.platform != Platform::kWinAmd64;
}

void gate_by_recorded_peaks(JobSettings& shape, const KernelPeaks& peaks, const Budget& budget) {
  const int threads = std::max(1, shape.nvcc_threads);
  const double slots = std::max(1.0, std::floor(budget.cores / threads));
  const double smallest_gb = peaks.smallest_mb / 1024;
  // As many compiles as could ever run at once (the cores' slots, or as many of the smallest
  // kernel as the memory holds), sharing all the memory: the grant is the memory the gate packs.
  const double most = std::max(1.0, std::min(slots, std::floor(budget.memory_gb / std::max(smallest_gb, 1e-9))));
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

}  // namespace fabuild
