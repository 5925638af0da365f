#include "publish/summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "publish/page.h"
#include "publish/timeline.h"

namespace fabuild {

namespace {

// A table cell: no line breaks, and "|" would end the cell.
std::string cell_text(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string shown(const std::string& wheelhouse, const std::string& rel) {
  return (std::filesystem::path(wheelhouse) / rel).generic_string();
}

// What the torch index had that is new since the last run that asked it (docs/stable-abi.md):
// "New since last run: torch 2.16 (verified: 1 wheel; 0 compiles)."; for a per-series matrix, the
// cells of its own it built ("torch 2.16 (3 new cells built)"); and what it withdrew.
std::string torch_news(const RunRecord& run) {
  std::string md;
  std::size_t compiled = 0;  // cells built this run (a filed wheel checked again compiles nothing)
  for (const auto& c : run.cells) compiled += c.status == "ok" && c.checked.empty() && !c.wheel.empty() ? 1 : 0;
  std::vector<std::string> news;
  for (const std::string& version : run.new_torch) {
    const std::string series = version.substr(0, version.rfind('.'));
    std::size_t ok = 0;
    std::size_t bad = 0;
    for (const auto& c : run.cells) {
      for (const auto& p : c.torch_proofs) {
        if (p.series != series) continue;
        (p.ok ? ok : bad) += 1;
      }
    }
    // Its own cells (a per-series matrix's new cells: "fa2.8.3/torch2.16/cu130"), built or not.
    std::size_t built = 0;
    std::size_t failed = 0;
    const std::string part = "/torch" + series + "/";
    for (const auto& c : run.cells) {
      if (("/" + c.dir + "/").find(part) == std::string::npos) continue;
      if (c.status == "ok" && c.checked.empty() && !c.wheel.empty()) ++built;
      if (c.status == "failed" || c.status == "timeout") ++failed;
    }
    std::vector<std::string> said;
    if (ok + bad > 0) {
      said.push_back(fmt::format("verified: {} wheel{} ok{}", ok, ok == 1 ? "" : "s",
                                 bad ? fmt::format(", **{} failed**", bad) : std::string()));
    }
    if (built > 0) said.push_back(fmt::format("{} new cell{} built", built, built == 1 ? "" : "s"));
    if (failed > 0) said.push_back(fmt::format("**{} cell{} failed**", failed, failed == 1 ? "" : "s"));
    if (said.empty()) said.push_back("not checked: no stable-ABI wheel of its CUDA here, no cell of its own built");
    news.push_back(fmt::format("torch {} ({})", version, fmt::join(said, "; ")));
  }
  if (!news.empty()) {
    md += fmt::format("New since last run: {}; {} compile{} this run.\n\n", fmt::join(news, ", "), compiled,
                      compiled == 1 ? "" : "s");
  }
  std::vector<std::string> gone;
  for (const auto& t : run.torch_releases) {
    if (!t.listed) gone.push_back(t.version);
  }
  if (!gone.empty()) {
    md += fmt::format("No longer on the torch index ({}): torch {}; kept in the record.\n\n", run.torch_index,
                      fmt::join(gone, ", "));
  }
  return md;
}

}  // namespace

std::string summary_markdown(const RunRecord& run, const std::string& wheelhouse) {
  std::size_t ok = 0;
  std::size_t up_to_date = 0;
  std::size_t failed = 0;
  for (const auto& c : run.cells) {
    ok += c.status == "ok" ? 1 : 0;
    up_to_date += c.status == "up to date" ? 1 : 0;
    failed += c.failed() ? 1 : 0;
  }
  const std::size_t other = run.cells.size() - ok - up_to_date - failed;
  std::string md = fmt::format("## fabuild: {} cell{} — {} ok, {} up to date, {} failed, {} not built\n\n",
                               run.cells.size(), run.cells.size() == 1 ? "" : "s", ok, up_to_date, failed, other);
  md += fmt::format("Matrix `{}`, started {}, took {}; budget {:g} cores, {:.1f} GB; exit code {}.\n\n", run.matrix,
                    run.started, clock_of(run.elapsed_s), run.budget_cores, run.budget_memory_gb, run.exit_code);
  // A CI job's setup (or, merged, each job's), as recorded for the next plan (docs/ci.md).
  std::vector<double> setups;
  for (const auto& c : run.cells) {
    if (c.job_setup_s) setups.push_back(*c.job_setup_s / 60);
  }
  if (!setups.empty()) {
    std::sort(setups.begin(), setups.end());
    md += setups.size() == 1 || setups.front() == setups.back()
              ? fmt::format("Job setup, from the job's start to its first compile: {:.1f} min.\n\n", setups.front())
              : fmt::format(
                    "Job setups, from each job's start to its first compile: {:.1f}-{:.1f} min ({} rows' first "
                    "cells).\n\n",
                    setups.front(), setups.back(), setups.size());
  }
  md += torch_news(run);
  md += "| cell | result | time | MAX_JOBS | NVCC_THREADS | wheel or log |\n|---|---|---:|---:|---:|---|\n";
  // The torch releases a wheel was checked under, as the page says them: "torch 2.11 ✓ 2.13 ✗".
  const auto proofs = [](const CellRecord& c) {
    if (c.torch_proofs.empty()) return std::string();
    std::string said = "; checked under torch";
    for (const auto& p : c.torch_proofs) said += fmt::format(" {} {}", p.series, p.ok ? "✓" : "✗");
    return said;
  };
  for (const auto& c : run.cells) {
    std::string where;
    if (c.built() && !c.wheel.empty()) {
      const std::string needs = needs_note(c.needs);
      where = fmt::format("`{}` ({}, sha256 `{}`{}{})", shown(wheelhouse, c.wheel), human_size(c.size),
                          c.sha256.substr(0, 16), needs.empty() ? "" : ", needs " + needs, proofs(c));
    } else if (!c.log.empty()) {
      where = fmt::format("`{}`", shown(wheelhouse, c.log));
    }
    // An ok cell's detail says what it did instead of a wheel (a compile share).
    const std::string result = c.failed()         ? "**" + c.status + "**"
                               : c.detail.empty() ? c.status
                                                  : c.status + ": " + c.detail;
    md += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", cell_text(c.id), result,
                      c.start_s ? clock_of(c.duration_s) : "", c.max_jobs > 0 ? std::to_string(c.max_jobs) : "",
                      c.nvcc_threads > 0 ? std::to_string(c.nvcc_threads) : "", cell_text(where));
  }
  if (failed > 0) {
    md += "\n### Failures\n\n";
    for (const auto& c : run.cells) {
      if (!c.failed()) continue;
      md += fmt::format("- `{}`: {}{}\n", cell_text(c.id), cell_text(c.detail.empty() ? c.status : c.detail),
                        c.log.empty() ? "" : fmt::format(" — log: `{}`", shown(wheelhouse, c.log)));
    }
  }
  return md;
}

}  // namespace fabuild
