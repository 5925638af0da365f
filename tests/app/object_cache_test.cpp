#include "app/object_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "../support/fake_files.h"
#include "../support/scratch_dir.h"
#include "util/error.h"

namespace fabuild {
namespace {

using test::ScratchDir;

#ifndef _WIN32
// fabuild-cc goes into <cache>/bin under a name made of its bytes, executable before it takes the
// name (a run sharing the cache may start it at once), with fabuild-c++ a link to it; installed
// again, it is left as it is.
TEST(ObjectCache, TheWrapperIsInstalledExecutableWithItsCxxNameAsALink) {
  test::FakeFiles files;
  const Expected<CcWrapper> w = install_cc_wrapper(files, "/cache");
  ASSERT_TRUE(w) << w.error().what;
  EXPECT_EQ(w->bin_dir, "/cache/bin");
  EXPECT_TRUE(files.executable(w->cc));
  EXPECT_GT(files.file(w->cc)->size(), 1000u) << "fabuild-cc's own bytes";
  EXPECT_TRUE(files.is_link(w->cxx));
  EXPECT_EQ(files.file(w->cxx), "-> " + std::filesystem::path(w->cc).filename().string());
  EXPECT_EQ(files.list("/cache/bin")->size(), 2u) << "no temporary file left";
  const auto before = files.identity(w->cc);
  ASSERT_TRUE(install_cc_wrapper(files, "/cache"));
  EXPECT_EQ(files.identity(w->cc)->inode, before->inode) << "an installed wrapper is not written again";
  files.fail_on(test::FileOp::kCreateDirectories, "/other/bin");
  const Expected<CcWrapper> refused = install_cc_wrapper(files, "/other");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what.find("cannot install the compiler wrapper"), std::string::npos);
}
#endif

TEST(ObjectCache, SettingsFromTheMatrixAndTheCommandLine) {
  CacheSpec spec;
  spec.dir = "objects";
  spec.max_bytes = 5'000'000'000;
  Options o;
  ObjectCacheSettings s = object_cache_settings(spec, o, "/m", "/cache");
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.dir, "/m/objects");
  EXPECT_EQ(s.max_bytes, 5'000'000'000U);
  o.cache_dir = "/elsewhere";
  o.cache_size = "1.5GiB";
  s = object_cache_settings(spec, o, "/m", "/cache");
  EXPECT_EQ(s.dir, "/elsewhere");
  EXPECT_EQ(s.max_bytes, 1610612736U);
  o.no_cache = true;
  EXPECT_FALSE(object_cache_settings(spec, o, "/m", "/cache").enabled);
  EXPECT_EQ(object_cache_settings(spec, o, "/m", "/cache").off_because, "--no-cache");
  o.no_cache = false;
  o.cache_size = "lots";
  EXPECT_THROW(object_cache_settings(spec, o, "/m", "/cache"), UserError);
  spec.enabled = false;
  o.cache_size.clear();
  EXPECT_FALSE(object_cache_settings(spec, o, "/m", "/cache").enabled);
}

TEST(ObjectCache, OnWindowsTheWrapperStandsInForNvccOnlyAsAWindowsCommandLine) {
  // torch's build.ninja runs $nvcc_from_env through CreateProcessW: a path with spaces is quoted.
  CellRun run;
  run.staging_dir = "C:\\wh\\.staging\\cell";
  ObjectCacheSettings s;
  s.dir = "C:\\fc\\objects";
  CcWrapper w;
  w.cc = "C:\\fc\\bin\\fabuild-cc-0123456789ab.exe";
  w.windows = true;
  use_object_cache(run, s, w, "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8", "", nullptr,
                   std::make_shared<RealFiles>());
  std::map<std::string, std::string> env(run.env.begin(), run.env.end());
  const std::string sep(1, static_cast<char>(std::filesystem::path::preferred_separator));
  EXPECT_EQ(env["PYTORCH_NVCC"],
            "C:\\fc\\bin\\fabuild-cc-0123456789ab.exe \"C:\\Program Files\\NVIDIA GPU Computing "
            "Toolkit\\CUDA\\v12.8" +
                sep + "bin" + sep + "nvcc.exe\"");
  EXPECT_EQ(env.count("CXX"), 0U);  // torch runs cl.exe by that name on Windows
  EXPECT_EQ(env["FABUILD_CC_DIR"], "C:\\fc\\objects");
  EXPECT_FALSE(env["FABUILD_CC_TALLY"].empty());
}

TEST(ObjectCache, TallyCountsEachCompileOnce) {
  ScratchDir dir("object-cache-tally");
  const auto path = dir.path() / "tally";
  std::ofstream(path) << "miss\t1000\t/s/a.cu\tno earlier compile\n"
                         "hit\t900\t/s/b.cu\t\n"
                         "hit\t800\t/s/c.cu\t\n"
                         "uncacheable\t0\t-\tnot a compile (no -c)\n"
                         "error\t0\t/s/d.cu\tcannot create /cache/tmp/x: No space left on device\n"
                         "garbage line\n";
  const CacheTally t = CellCompiles(path.string(), std::make_shared<RealFiles>()).after_build();
  EXPECT_EQ(t.hits, 2U);
  EXPECT_EQ(t.misses, 1U);
  EXPECT_EQ(t.uncacheable, 1U);
  EXPECT_EQ(t.errors, 1U);
  EXPECT_EQ(t.stored_bytes, 1000U);
  EXPECT_EQ(t.hit_bytes, 1700U);
  EXPECT_EQ(t.as_map().at("hits"), 2U);
  EXPECT_EQ(t.not_hits,
            (std::vector<std::string>{"miss /s/a.cu: no earlier compile", "uncacheable -: not a compile (no -c)",
                                      "error /s/d.cu: cannot create /cache/tmp/x: No space left on device"}));
  EXPECT_EQ(CellCompiles((dir.path() / "absent").string(), std::make_shared<RealFiles>()).after_build().compiles(), 0U);
}

// While the build runs the follower sees whole lines as they come; once it has ended the rest
// is read once, a last line without its newline included, and the value kept: what fabuild-cc
// might write later changes nothing the steps after the build were given.
TEST(ObjectCache, ACellsTallyIsReadAsItGrowsThenOnceAfterTheBuild) {
  ScratchDir dir("object-cache-cell-tally");
  const auto path = dir.path() / "tally";
  CellCompiles compiles(path.string(), std::make_shared<RealFiles>());
  EXPECT_EQ(compiles.read_new().compiles(), 0U);  // nothing written yet
  std::ofstream(path, std::ios::app) << "hit\t900\t/s/a.cu\t\nmiss\t1000\t/s/b";
  EXPECT_EQ(compiles.read_new().hits, 1U);
  EXPECT_EQ(compiles.read_new().misses, 0U) << "half a line is not counted while the build runs";
  std::ofstream(path, std::ios::app) << ".cu\tno earlier compile\nhit\t800\t/s/c.cu\t";
  const CacheTally& whole = compiles.after_build();
  EXPECT_EQ(whole.hits, 2U);
  EXPECT_EQ(whole.misses, 1U);
  EXPECT_EQ(whole.sources, (std::vector<std::string>{"/s/a.cu", "/s/b.cu", "/s/c.cu"}));
  std::ofstream(path, std::ios::app) << "\nmiss\t5\t/s/d.cu\tlate\n";
  EXPECT_EQ(compiles.after_build().compiles(), 3U);
  EXPECT_EQ(compiles.read_new().compiles(), 3U);
}

// The run's OBJECT CACHE table counts the cells whose file step recorded their compiles, as
// their manifest entries say them; a cell that never got that far is not in it.
TEST(ObjectCache, TheRunsTableHasTheCellsWhoseFileStepRecordedTheirCompiles) {
  CacheTally filed;
  filed.hits = 3;
  filed.misses = 1;
  std::map<std::string, std::shared_ptr<CellCompiles>> cells = {
      {"filed", std::make_shared<CellCompiles>(filed)},
      {"failed-before-filing", std::make_shared<CellCompiles>(CacheTally{})},
      {"no-cache", nullptr}};
  EXPECT_EQ(cells["filed"]->for_entry().hits, 3U);
  const ObjectCacheReport report = object_cache_report(cells);
  ASSERT_EQ(report.cells.size(), 1U);
  EXPECT_EQ(report.cells.at("filed").hits, 3U);
  EXPECT_EQ(report.cells.at("filed").misses, 1U);
}

// Whoever made the tally, the cell's steps take the value: nothing is read.
TEST(ObjectCache, AKnownTallyIsHandedOnAsItIs) {
  CacheTally known;
  known.hits = 4;
  known.objects = {{"m", "r"}};
  CellCompiles compiles(known);
  EXPECT_EQ(compiles.read_new().hits, 4U);
  EXPECT_EQ(compiles.after_build().objects, known.objects);
}

TEST(ObjectCache, EveryCellOfARowButTheFirstComesAfterIt) {
  const PresetPtr preset = find_preset("flash-attn");
  ASSERT_NE(preset, nullptr);
  const auto cell = [&](const char* python, const char* torch) {
    Cell c;
    c.package = preset;
    c.version = *Version::parse("2.8.3");
    c.torch = *Version::parse(torch);
    c.cuda.toolkit = *Version::parse("12.8");
    c.python = *PythonTag::parse(python);
    return c;
  };
  const std::vector<Cell> cells = {cell("cp311", "2.8"), cell("cp312", "2.8"), cell("cp311", "2.7"),
                                   cell("cp313", "2.8"), cell("cp312", "2.7")};
  std::vector<CellRun> runs(cells.size() + 1);
  const std::vector<std::string> rows = {compile_row(cells[0]), compile_row(cells[1]), compile_row(cells[2]), "",
                                         compile_row(cells[3]), compile_row(cells[4])};
  first_of_each_row_first(runs, rows);
  EXPECT_FALSE(runs[0].demand.after);
  EXPECT_EQ(runs[1].demand.after, 0U);
  EXPECT_FALSE(runs[2].demand.after);
  EXPECT_FALSE(runs[3].demand.after);  // a command cell: no row
  EXPECT_EQ(runs[4].demand.after, 0U);
  EXPECT_EQ(runs[5].demand.after, 2U);
  EXPECT_NE(compile_row(cells[0]), compile_row(cells[2]));
  EXPECT_EQ(compile_row(cells[0]), compile_row(cells[3]));
}

}  // namespace
}  // namespace fabuild
