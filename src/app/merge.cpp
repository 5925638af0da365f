#include "app/merge.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <spdlog/spdlog.h>

#include "app/merge_report.h"
#include "publish/publish.h"
#include "util/error.h"
#include "wheel/merge.h"

namespace fabuild {

namespace {

namespace fs = std::filesystem;

std::string plural(std::size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

UserError refusal(const MergePlan& plan) {
  std::string text = fmt::format("merge refused, nothing was written to {}:", plan.out.string());
  if (!plan.conflicts.empty()) {
    text += fmt::format(" {} with two different versions", plural(plan.conflicts.size(), "name", "names"));
  }
  if (!plan.problems.empty()) {
    text += fmt::format("{} {} that disagree{} with {}", plan.conflicts.empty() ? "" : ";",
                        plural(plan.problems.size(), "damaged part file", "damaged part files"),
                        plan.problems.size() == 1 ? "s" : "", plan.problems.size() == 1 ? "its wheel" : "their wheels");
  }
  for (const auto& c : plan.conflicts) {
    text +=
        fmt::format("\n  {}{}\n    {}: sha256 {}\n    {}: sha256 {}", c.what,
                    c.detail.empty() ? "" : " (" + c.detail + ")", c.first, c.first_sha256, c.second, c.second_sha256);
  }
  for (const auto& p : plan.problems) text += "\n  " + p;
  const std::string hint = plan.conflicts.empty() ? "a part was damaged on its way here (an upload or download cut "
                                                    "short): fetch it again or build its cells again"
                                                  : "a wheel is never replaced by a different one: find which build is "
                                                    "right (its log is under logs/), remove the "
                                                    "other file from its part, and merge again";
  return UserError(kExitCellFailed, Location{}, text, hint);
}

void print_summary(const MergePlan& plan, const MergeResult* done, std::ostream& out) {
  std::size_t wheels_new = 0;
  std::size_t cells_new = 0;
  for (const auto& w : plan.wheels) wheels_new += w.present ? 0 : 1;
  for (const auto& c : plan.cells) cells_new += c.present ? 0 : 1;
  const char* verb = done != nullptr ? "merged" : "would merge";
  fmt::print(out, "fabuild: {} {} into {}\n", verb, plural(plan.parts.size(), "part", "parts"), plan.out.string());
  fmt::print(out, "  wheels      {} {}, {} already there\n", done != nullptr ? done->wheels_copied : wheels_new,
             done != nullptr ? "copied" : "to copy", plan.wheels.size() - wheels_new);
  const std::size_t cells = done != nullptr ? done->cells_added : cells_new;
  fmt::print(out, "  manifest    {} {}, {} already there\n", plural(cells, "cell", "cells"),
             done != nullptr ? "added" : "to add", plan.cells.size() - cells_new);
  if (done != nullptr)
    fmt::print(out, "  SHA256SUMS  {} written\n", plural(done->sums_written, "directory", "directories"));
  fmt::print(out, "  logs        {} {}\n", done != nullptr ? done->logs_copied : plan.logs.size(),
             done != nullptr ? "copied" : "to copy");
  if (plan.regenerated > 0) {
    fmt::print(out, "  index       {} of the parts left out, made again for {}\n",
               plural(plan.regenerated, "file", "files"), plan.out.string());
  }
  for (const auto& d : plan.duplicates) fmt::print(out, "  taken once: {}\n", d);
  for (const auto& n : plan.notes) fmt::print(out, "  note: {}\n", n);
  if (!plan.left_out.empty()) {
    fmt::print(out, "  left out {} that {} not part of a wheelhouse:\n", plural(plan.left_out.size(), "file", "files"),
               plan.left_out.size() == 1 ? "is" : "are");
    constexpr std::size_t kShown = 10;
    for (std::size_t i = 0; i < plan.left_out.size() && i < kShown; ++i) fmt::print(out, "    {}\n", plan.left_out[i]);
    if (plan.left_out.size() > kShown) fmt::print(out, "    ... and {} more\n", plan.left_out.size() - kShown);
  }
}

}  // namespace

ExitCode merge_wheelhouses(const MergeOptions& options, std::ostream& out) {
  std::vector<fs::path> parts(options.parts.begin(), options.parts.end());
  const MergePlan plan = plan_merge(parts, options.out);
  if (plan.refused()) throw refusal(plan);
  if (options.dry_run) {
    print_summary(plan, nullptr, out);
    return kExitOk;
  }
  std::vector<std::string> warnings;
  std::optional<RunRecord> run = merged_run_record(plan.parts, warnings);
  const Expected<MergeResult> result = apply_merge(plan);
  if (!result) throw user_error_of(result.error());
  print_summary(plan, &*result, out);
  for (const auto& w : warnings) spdlog::warn("{}", w);
  // The indexes, the page and summary.md describe the merged wheelhouse, not any one part:
  // made again here (src/publish), with the parts' run records as one.
  const Published published = publish_wheelhouse(plan.out, std::move(run), PublishOptions{});
  for (const auto& w : published.warnings) spdlog::warn("{}", w);
  fmt::print(out, "fabuild: index: {} in {}/simple/; page {}/{}{}\n",
             plural(published.catalog.wheels.size(), "wheel", "wheels"), plan.out.string(), plan.out.string(),
             kPageName,
             published.has_run ? fmt::format(", summary {}/{}", plan.out.string(), kSummaryName) : std::string());
  for (const auto& l : published.catalog.left_out) spdlog::error("not published: {}/{}", plan.out.string(), l);
  return published.catalog.left_out.empty() ? kExitOk : kExitCellFailed;
}

}  // namespace fabuild
