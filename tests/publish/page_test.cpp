// The grid, the page, the timeline and summary.md, from records and a real catalog.

#include "publish/page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "publish/summary.h"
#include "publish/timeline.h"
#include "support.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using ::testing::HasSubstr;
using ::testing::Not;

CellRecord record(const std::string& py, const std::string& status, double start, double duration) {
  CellRecord c;
  c.id = "fa2.8.3-torch2.8-cu128-" + py + "-linux_x86_64";
  c.status = status;
  c.start_s = start;
  c.duration_s = duration;
  c.max_jobs = 6;
  c.nvcc_threads = 2;
  c.memory_gb = 30;
  c.dir = "fa2.8.3/torch2.8/cu128";
  c.python = py;
  c.platform = "linux_x86_64";
  c.log = "logs/" + c.id + ".log";
  return c;
}

class Page : public ::testing::Test {
 protected:
  void SetUp() override {
    wheel = test::file_test_wheel(house, "cp312");
    test::file_test_wheel(house, "cp310", "fa2.8.3/torch2.7/cu126");  // no record names it
    fs::create_directories(house / "logs");
    run.started = "2025-11-22T01:00:00Z";
    run.matrix = "matrix/flash-attn.yaml";
    run.elapsed_s = 4000;
    run.budget_cores = 16;
    run.budget_memory_gb = 60;
    run.exit_code = 1;
    run.cells = {record("cp312", "ok", 0, 3600), record("cp313", "failed", 10, 1800),
                 record("cp311", "cancelled", 0, 0)};
    run.cells[0].wheel = wheel;
    run.cells[1].detail = "build: exit 1";
    run.cells[2].start_s.reset();
    std::ofstream(house / run.cells[1].log) << "nvcc: Killed\n";
    catalog = catalog_wheelhouse(house);
    run.cells[0].sha256 = catalog.wheels.at(1).sha256;
    run.cells[0].size = catalog.wheels.at(1).size;
  }

  std::string page() {
    grid = make_grid(house, run.cells, {}, catalog);
    trees = {IndexTree{"", {"flash-attn"}}, IndexTree{"cu128/torch2.8", {"flash-attn"}}};
    PageInput in{&grid, &catalog, &trees, &run, "", {"report.json"}};
    return render_page(in);
  }

  ScratchDir dir{"fabuild-page"};
  fs::path house = dir.path();
  std::string wheel;
  RunRecord run;
  Catalog catalog;
  Grid grid;
  std::vector<IndexTree> trees;
};

TEST_F(Page, TheGridHasVersionTorchRowsAndCudaPythonColumns) {
  const Grid g = make_grid(house, run.cells, {}, catalog);
  EXPECT_EQ(g.rows, (std::vector<std::string>{"fa2.8.3/torch2.7", "fa2.8.3/torch2.8"}));
  EXPECT_EQ(g.columns, (std::vector<std::string>{"cu126/cp310", "cu128/cp311", "cu128/cp312", "cu128/cp313"}));
  const auto& built = g.entries.at({1, 2}).at(0);
  EXPECT_EQ(built.state, BuildState::kBuilt);
  ASSERT_NE(built.wheel, nullptr);
  EXPECT_EQ(built.wheel->path, wheel);
  const auto& failed = g.entries.at({1, 3}).at(0);
  EXPECT_EQ(failed.state, BuildState::kFailed);
  EXPECT_EQ(failed.log, "logs/fa2.8.3-torch2.8-cu128-cp313-linux_x86_64.log");
  const auto& cancelled = g.entries.at({1, 1}).at(0);
  EXPECT_EQ(cancelled.state, BuildState::kNotBuilt);
  EXPECT_EQ(cancelled.log, "") << "no log on disk, no link";
  const auto& stray = g.entries.at({0, 0}).at(0);
  EXPECT_EQ(stray.state, BuildState::kBuilt);
  EXPECT_EQ(stray.status, "filed");
  EXPECT_EQ(count_states(g), (std::array<std::size_t, 3>{2, 1, 1}));
}

TEST_F(Page, AManifestCellWithoutARecordIsBuiltAndARecordWhoseWheelIsGoneIsNot) {
  std::map<std::string, FiledCell> filed;
  filed["fa2.8.3-torch2.7-cu126-cp310-linux_x86_64"] =
      FiledCell{catalog.wheels.at(0).path, 42, "", {}, {}, {}, false, "", {}};
  fs::remove(house / wheel);
  const Catalog now = catalog_wheelhouse(house);
  const Grid g = make_grid(house, run.cells, filed, now);
  const auto& from_manifest = g.entries.at({0, 0}).at(0);
  EXPECT_EQ(from_manifest.id, "fa2.8.3-torch2.7-cu126-cp310-linux_x86_64");
  EXPECT_EQ(from_manifest.build_s, 42);
  const auto& gone = g.entries.at({1, 2}).at(0);
  EXPECT_EQ(gone.state, BuildState::kNotBuilt);
  EXPECT_EQ(gone.detail, "its wheel is no longer in the wheelhouse");
}

// pip discards a wheel from an index whose METADATA lacks the label it was chosen by (naming:
// upstream): the page gives the install by URL, which pip and uv both take.
TEST_F(Page, AWheelLabelledInItsFileNameOnlyIsInstalledByUrl) {
  catalog.wheels.at(1).label_in_file_only = true;
  EXPECT_THAT(page(), HasSubstr("pip install <span class=\"base\"></span>fa2.8.3/torch2.8/cu128/"
                                "flash_attn-2.8.3%2Bcu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"));
}

TEST_F(Page, ShowsEachCellWithWhatAPersonNeeds) {
  const std::string h = page();
  EXPECT_THAT(h, HasSubstr("<input id=\"filter\""));
  EXPECT_THAT(h, HasSubstr("<span class=\"built\">2 built</span>"));
  EXPECT_THAT(
      h, HasSubstr("pip install flash-attn==2.8.3+cu128torch2.8cxx11abiTRUE --index-url <span class=\"base\"></span>"
                   "cu128/torch2.8/simple/"));
  EXPECT_THAT(h, HasSubstr("data-copy=\"" + catalog.wheels.at(1).sha256 + "\""));
  EXPECT_THAT(h, HasSubstr("<a class=\"log\" href=\"logs/fa2.8.3-torch2.8-cu128-cp313-linux_x86_64.log\">"));
  EXPECT_THAT(h, HasSubstr("build: exit 1"));
  EXPECT_THAT(
      h,
      HasSubstr(
          "href=\"fa2.8.3/torch2.8/cu128/flash_attn-2.8.3%2Bcu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl\""));
  EXPECT_THAT(h, HasSubstr("data-search=\"fa2.8.3 torch2.8 cu128 cp313 fa2.8.3-torch2.8-cu128-cp313-linux_x86_64 "
                           "failed failed linux_x86_64\""));
  EXPECT_THAT(h, HasSubstr("<svg id=\"timeline\""));
  EXPECT_THAT(h, HasSubstr("<a href=\"report.json\">report.json</a>"));
  // Static and self-contained: nothing is loaded from elsewhere.
  EXPECT_FALSE(std::regex_search(h, std::regex("(src|href)=\"(https?:)?//")));
  EXPECT_THAT(h, Not(HasSubstr("<link rel=\"stylesheet\"")));
}

TEST_F(Page, AWheelShowsTheOldestGlibcItLoadsOnWhenItIsKnown) {
  EXPECT_THAT(page(), Not(HasSubstr("needs glibc"))) << "unknown (an older manifest): nothing said";
  run.cells[0].needs = {{"glibc", "2.28"}, {"glibcxx", "3.4.21"}};
  EXPECT_THAT(page(), HasSubstr("needs glibc ≥ 2.28 · GLIBCXX_3.4.21</div>"));
  EXPECT_THAT(summary_markdown(run, "w"), HasSubstr(", needs glibc ≥ 2.28 · GLIBCXX_3.4.21)"));
  // A cell only the manifest knows (filed by a run elsewhere, merged in) shows it from there.
  std::ofstream(house / "manifest.json") << R"({"cells": {"fa2.8.3-torch2.7-cu126-cp310-linux_x86_64": {"wheel": ")"
                                         << catalog.wheels.at(0).path
                                         << R"(", "sha256": "a", "size": 1, "needs": {"glibc": "2.17"}}}})";
  const std::map<std::string, FiledCell> filed = filed_cells(read_manifest(house).value());
  EXPECT_EQ(filed.begin()->second.needs.at("glibc"), "2.17");
  const Grid g = make_grid(house, run.cells, filed, catalog);
  EXPECT_EQ(g.entries.at({0, 0}).at(0).needs.at("glibc"), "2.17");
  EXPECT_EQ(needs_note({{"glibc", "2.17"}}), "glibc ≥ 2.17");
  EXPECT_EQ(needs_note({}), "");
}

// A library cell's archive: filed under <package><version>/lib/<cuXYZ>/<profile>/ with its digest
// in SHA256SUMS beside it; a row of its own ("fa3.0.0/lib/minimal"), column "cu130/lib".
TEST_F(Page, ALibraryHasARowOfItsOwnWithItsDigestAndHowToUseIt) {
  const std::string dir = "fa3.0.0/lib/cu130/minimal";
  const std::string name = "flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64.tar.gz";
  fs::create_directories(house / dir);
  std::ofstream(house / dir / name) << "not really gzip";
  const std::string digest(64, 'a');
  std::ofstream(house / dir / "SHA256SUMS") << digest << "  " << name << "\n";
  catalog = catalog_wheelhouse(house);
  ASSERT_EQ(catalog.libraries.size(), 1u);
  EXPECT_EQ(catalog.libraries[0].sha256, digest);  // as SHA256SUMS says: the archive is not read
  EXPECT_EQ(catalog.libraries[0].size, 15u);
  CellRecord lib;
  lib.id = "fa3.0.0-lib-cu130-linux_x86_64-minimal";
  lib.status = "ok";
  lib.duration_s = 130;
  lib.dir = dir;
  lib.platform = "linux_x86_64";
  lib.wheel = dir + "/" + name;
  lib.library = true;
  run.cells.push_back(lib);
  const Grid g = make_grid(house, run.cells, {}, catalog);
  EXPECT_EQ(g.rows, (std::vector<std::string>{"fa2.8.3/torch2.7", "fa2.8.3/torch2.8", "fa3.0.0/lib/minimal"}));
  const auto row = static_cast<std::size_t>(2);
  const auto col =
      static_cast<std::size_t>(std::find(g.columns.begin(), g.columns.end(), "cu130/lib") - g.columns.begin());
  ASSERT_LT(col, g.columns.size());
  const GridEntry& e = g.entries.at({row, col}).at(0);
  EXPECT_EQ(e.state, BuildState::kBuilt);
  ASSERT_NE(e.library, nullptr);
  EXPECT_EQ(e.wheel, nullptr);
  const std::string h = page();
  EXPECT_THAT(h, HasSubstr("fa3.0.0 · lib · minimal"));
  EXPECT_THAT(h, HasSubstr("data-copy=\"" + digest + "\""));
  EXPECT_THAT(h, HasSubstr("tar xzf " + name +
                           " &amp;&amp; cmake -DCMAKE_PREFIX_PATH=$PWD/"
                           "flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64"));
  EXPECT_THAT(h, HasSubstr("<a href=\"" + dir + "/" + name + "\">library</a>"));
  EXPECT_THAT(h, HasSubstr("· 2 wheels published · 1 library</p>"));
  // Gone from disk: not built, and said so.
  fs::remove(house / dir / name);
  catalog = catalog_wheelhouse(house);
  const Grid after = make_grid(house, run.cells, {}, catalog);
  const GridEntry& gone = after.entries.at({row, col}).at(0);
  EXPECT_EQ(gone.state, BuildState::kNotBuilt);
  EXPECT_EQ(gone.detail, "its library is no longer in the wheelhouse");
}

TEST_F(Page, ABakedBaseUrlGoesIntoThePipLines) {
  grid = make_grid(house, run.cells, {}, catalog);
  trees = {IndexTree{"", {"flash-attn"}}};
  PageInput in{&grid, &catalog, &trees, nullptr, "https://wheels.test/fa/", {}};
  const std::string h = render_page(in);
  EXPECT_THAT(h, HasSubstr("<body data-base=\"https://wheels.test/fa/\">"));
  EXPECT_THAT(h, HasSubstr("<span class=\"base\">https://wheels.test/fa/</span>cu128/torch2.8/simple/"));
  EXPECT_THAT(h, Not(HasSubstr("<svg"))) << "no run record, no timeline";
}

TEST_F(Page, TheTimelineHasABarPerStartedCellAndTheMemoryAgainstTheBudget) {
  const std::string svg = timeline_svg(run);
  std::size_t bars = 0;
  for (std::size_t at = svg.find("<g class=\"bar\""); at != std::string::npos;
       at = svg.find("<g class=\"bar\"", at + 1))
    ++bars;
  EXPECT_EQ(bars, 2u) << "the cancelled cell never started";
  EXPECT_THAT(svg, HasSubstr("MAX_JOBS=6 · 1:00:00"));
  EXPECT_THAT(svg,
              HasSubstr("fa2.8.3-torch2.8-cu128-cp313-linux_x86_64: failed at 0:10 for 30:00, MAX_JOBS=6, 30.0 GB"));
  EXPECT_THAT(svg, HasSubstr("budget 60.0 GB"));
  EXPECT_THAT(svg, HasSubstr("<path class=\"mem\""));
  // The y axis holds the peak (60 GB: both cells at once), so the budget line sits at the top.
  EXPECT_THAT(svg, HasSubstr("L330.0,"));
  run.cells[0].start_s.reset();
  run.cells[1].start_s.reset();
  EXPECT_EQ(timeline_svg(run), "");
}

TEST_F(Page, SummaryMarkdownCountsTablesAndPointsAtFailedLogs) {
  const std::string md = summary_markdown(run, "out/wheelhouse");
  EXPECT_THAT(md, HasSubstr("## fabuild: 3 cells — 1 ok, 0 up to date, 1 failed, 1 not built"));
  EXPECT_THAT(md, HasSubstr("| cell | result | time | MAX_JOBS | NVCC_THREADS | wheel or log |"));
  EXPECT_THAT(
      md, HasSubstr("| `fa2.8.3-torch2.8-cu128-cp312-linux_x86_64` | ok | 1:00:00 | 6 | 2 | `out/wheelhouse/" + wheel));
  EXPECT_THAT(md, HasSubstr("### Failures\n\n- `fa2.8.3-torch2.8-cu128-cp313-linux_x86_64`: build: exit 1 — log: "
                            "`out/wheelhouse/logs/fa2.8.3-torch2.8-cu128-cp313-linux_x86_64.log`"));
  run.cells[1].detail = "verify: a | b\nc";
  EXPECT_THAT(summary_markdown(run, "w"), HasSubstr("verify: a \\| b c"));
  // An ok cell that files no wheel (a compile share) says what it did in its result.
  run.cells[0].detail = "compile share 2/4: 4 compiled, 0 from the cache, 13 left to other shares";
  EXPECT_THAT(summary_markdown(run, "w"),
              HasSubstr("| ok: compile share 2/4: 4 compiled, 0 from the cache, 13 left to other shares | 1:00:00 |"));
}

TEST_F(Page, SummaryMarkdownSaysWhatIsNewOnTheTorchIndexAndThatItCompiledNothing) {
  run.cells = {run.cells[0]};
  run.cells[0].checked = {"2.16"};
  run.cells[0].torch_proofs = {{"2.15", "2.15.0+cu132", "13.2", true, "loads", ""},
                               {"2.16", "2.16.0+cu132", "13.2", true, "loads", ""}};
  run.new_torch = {"2.16.0"};
  run.torch_index = "pip's configured index";
  run.torch_releases = {{"2.16.0", "13.2", "", true}, {"2.9.1", "12.8", "", false}};
  const std::string md = summary_markdown(run, "w");
  EXPECT_THAT(md, HasSubstr("New since last run: torch 2.16.0 (verified: 1 wheel ok); 0 compiles this run."));
  EXPECT_THAT(md, HasSubstr("No longer on the torch index (pip's configured index): torch 2.9.1; kept in the record."));
  // The wheel's row says which torch releases it was checked under, as the page does.
  EXPECT_THAT(md, HasSubstr("; checked under torch 2.15 ✓ 2.16 ✓)"));
  run.cells[0].torch_proofs[1].ok = false;
  EXPECT_THAT(summary_markdown(run, "w"), HasSubstr("; checked under torch 2.15 ✓ 2.16 ✗)"));
}

// A per-series matrix gets new cells for a new torch: the summary counts those it built.
TEST_F(Page, ThePageSaysWhichTorchReleasesTheIndexHadAndWhatIsNew) {
  run.torch_index = "pip's configured index";
  run.torch_releases = {{"2.15.0", "13.2", "", true}, {"2.16.0", "13.2", "", true}, {"2.9.1", "12.8", "", false}};
  run.new_torch = {"2.16.0"};
  const std::string html = page();
  EXPECT_THAT(html, HasSubstr("Torch releases on the torch index (pip&#39;s configured index) when it was planned: "
                              "2.15.0 (CUDA 13.2), <b>2.16.0 new (CUDA 13.2)</b>; no longer listed, kept in the "
                              "record: 2.9.1 (CUDA 12.8)."));
  run.torch_releases.clear();
  EXPECT_THAT(page(), Not(HasSubstr("Torch releases")));
}

TEST_F(Page, SummaryMarkdownCountsTheNewSeriesOwnCells) {
  CellRecord built = run.cells[0];
  built.dir = "fa2.8.3/torch2.16/cu130";
  built.checked.clear();
  built.torch_proofs.clear();
  CellRecord failed = built;
  failed.status = "failed";
  failed.wheel.clear();
  CellRecord other = built;
  other.dir = "fa2.8.3/torch2.15/cu130";
  run.cells = {built, built, failed, other};
  run.new_torch = {"2.16.0"};
  const std::string md = summary_markdown(run, "w");
  EXPECT_THAT(md, HasSubstr("New since last run: torch 2.16.0 (2 new cells built; **1 cell failed**); 3 compiles"));
  run.cells = {other};
  EXPECT_THAT(summary_markdown(run, "w"),
              HasSubstr("torch 2.16.0 (not checked: no stable-ABI wheel of its CUDA here, no cell of its own built)"));
}

// A CI job's setup, on the first cell of each row it built: the job's summary says it, a merged
// one the range over the jobs; report.json keeps it.
TEST_F(Page, SummaryMarkdownSaysTheJobsSetup) {
  EXPECT_THAT(summary_markdown(run, "w"), Not(HasSubstr("setup")));
  run.cells[0].job_setup_s = 684;
  EXPECT_THAT(summary_markdown(run, "w"),
              HasSubstr("Job setup, from the job's start to its first compile: 11.4 min.\n\n| cell |"));
  run.cells[2].job_setup_s = 540;
  EXPECT_THAT(summary_markdown(run, "w"),
              HasSubstr("Job setups, from each job's start to its first compile: 9.0-11.4 min (2 rows' first cells)."));
  const RunRecord back = parse_report(report_json(run), "report.json").value();
  EXPECT_EQ(back.cells[0].job_setup_s, 684);
  EXPECT_FALSE(back.cells[1].job_setup_s);
}

}  // namespace
}  // namespace fabuild
