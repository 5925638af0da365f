#include "publish/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "publish/html.h"

namespace fabuild {

namespace {

constexpr double kWidth = 1000;  // viewBox units; the SVG scales to the page
constexpr double kLabelW = 330;  // left column: cell ids
constexpr double kBarH = 16;
constexpr double kRowH = 22;
constexpr double kAxisH = 22;
constexpr double kMemH = 90;

struct Bar {
  const CellRecord* cell;
  bool preparation;
};

std::string color_of(const CellRecord& c, bool preparation) {
  if (preparation) return c.built() ? "#8aa4c8" : "#c0392b";
  if (c.built()) return "#2e8b57";
  if (c.failed()) return "#c0392b";
  return "#999999";
}

// A round step for the time axis: about six ticks.
double tick_step(double total) {
  static const double steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600};
  for (const double s : steps) {
    if (total / s <= 8) return s;
  }
  return 43200;
}

}  // namespace

std::string clock_of(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string timeline_svg(const RunRecord& run) {
  std::vector<Bar> bars;
  for (const auto& c : run.preparation) {
    if (c.start_s) bars.push_back({&c, true});
  }
  for (const auto& c : run.cells) {
    if (c.start_s) bars.push_back({&c, false});
  }
  if (bars.empty()) return {};
  double total = run.elapsed_s;
  for (const auto& b : bars) total = std::max(total, *b.cell->start_s + b.cell->duration_s);
  total = std::max(total, 1.0);
  const double chart_w = kWidth - kLabelW - 10;
  const auto x_of = [&](double t) { return kLabelW + t / total * chart_w; };
  const double bars_h = static_cast<double>(bars.size()) * kRowH;
  const double mem_top = kAxisH + bars_h + 16;
  const double height = mem_top + kMemH + 24;

  std::string svg = fmt::format(
      "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {:g} {:g}\" role=\"img\" "
      "aria-label=\"timeline of the last run\">\n",
      kWidth, height);
  // Time axis with grid lines.
  const double step = tick_step(total);
  for (double t = 0; t <= total + 1e-9; t += step) {
    // Labels centred on their line, the last one kept inside the picture.
    const bool last = x_of(t) > kWidth - 40;
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:g}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>"
        "<text class=\"tick\" x=\"{0:.1f}\" y=\"14\" text-anchor=\"{4}\">{3}</text>\n",
        x_of(t), kAxisH - 4, mem_top + kMemH, clock_of(t), last ? "end" : "middle");
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const CellRecord& c = *bars[i].cell;
    const double y = kAxisH + static_cast<double>(i) * kRowH;
    const double x = x_of(*c.start_s);
    const double w = std::max(1.5, c.duration_s / total * chart_w);
    const std::string jobs = c.max_jobs > 0 ? fmt::format("MAX_JOBS={}", c.max_jobs) : std::string();
    const std::string tip = fmt::format("{}: {} at {} for {}{}{}", c.id, c.status, clock_of(*c.start_s),
                                        clock_of(c.duration_s), jobs.empty() ? "" : ", " + jobs,
                                        c.memory_gb > 0 ? fmt::format(", {:.1f} GB", c.memory_gb) : std::string());
    svg += fmt::format("<g class=\"bar\" data-cell=\"{}\"><title>{}</title>", html_escape(c.id), html_escape(tip));
    svg += fmt::format("<text class=\"label\" x=\"{:g}\" y=\"{:.1f}\">{}</text>", kLabelW - 6, y + kBarH - 4,
                       html_escape(c.id));
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:g}\" rx=\"2\" fill=\"{}\"/>", x, y,
                       w, kBarH, color_of(c, bars[i].preparation));
    // The label goes inside a wide bar, else after it, else (at the right edge) before it.
    const std::string label =
        fmt::format("{}{}", jobs, jobs.empty() ? clock_of(c.duration_s) : " · " + clock_of(c.duration_s));
    const double label_w = 6.5 * static_cast<double>(label.size());
    const bool inside = w > label_w + 8;
    const bool after = !inside && x + w + 4 + label_w < kWidth;
    const double label_x = inside ? x + 4 : after ? x + w + 4 : x - 4;
    svg += fmt::format("<text class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\"{}>{}</text></g>\n", inside ? "in" : "out", label_x,
                       y + kBarH - 4, inside || after ? "" : " text-anchor=\"end\"", html_escape(label));
  }

  // Memory held by running cells: a step curve from each start (+) and end (-).
  std::vector<std::pair<double, double>> events;
  for (const auto& b : bars) {
    if (b.cell->memory_gb <= 0) continue;
    events.emplace_back(*b.cell->start_s, b.cell->memory_gb);
    // The share is given back when the compile ends (held_s), not when the cell does.
    events.emplace_back(*b.cell->start_s + b.cell->held_s.value_or(b.cell->duration_s), -b.cell->memory_gb);
  }
  std::sort(events.begin(), events.end());
  double peak = run.budget_memory_gb;
  double used = 0;
  for (const auto& [t, d] : events) peak = std::max(peak, used += d);
  peak = std::max(peak, 1.0);
  const auto y_of = [&](double gb) { return mem_top + kMemH - gb / peak * kMemH; };
  std::string path = fmt::format("M{:.1f},{:.1f}", x_of(0), y_of(0));
  used = 0;
  for (const auto& [t, d] : events) {
    path += fmt::format(" L{0:.1f},{1:.1f}", x_of(t), y_of(used));
    used = std::max(0.0, used + d);
    path += fmt::format(" L{0:.1f},{1:.1f}", x_of(t), y_of(used));
  }
  path += fmt::format(" L{0:.1f},{1:.1f} Z", x_of(total), y_of(0));
  svg += fmt::format("<text class=\"label\" x=\"{:g}\" y=\"{:.1f}\">memory in use (GB)</text>\n", kLabelW - 6,
                     mem_top + kMemH / 2);
  svg += fmt::format("<path class=\"mem\" d=\"{}\"><title>memory held by running cells</title></path>\n", path);
  if (run.budget_memory_gb > 0) {
    svg += fmt::format(
        "<line class=\"budget\" x1=\"{:g}\" y1=\"{:.1f}\" x2=\"{:g}\" y2=\"{:.1f}\"/>"
        "<text class=\"tick\" x=\"{:g}\" y=\"{:.1f}\" text-anchor=\"end\">budget {:.1f} GB</text>\n",
        kLabelW, y_of(run.budget_memory_gb), kWidth - 10, y_of(run.budget_memory_gb), kWidth - 12,
        y_of(run.budget_memory_gb) - 3, run.budget_memory_gb);
  }
  svg += fmt::format("<text class=\"tick\" x=\"{:g}\" y=\"{:.1f}\">0</text>\n", kLabelW - 6, mem_top + kMemH);
  svg += "</svg>\n";
  return svg;
}

}  // namespace fabuild
