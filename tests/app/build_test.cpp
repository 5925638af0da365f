// build() against a fake System whose supervisor runs nothing (tests/support/fake_supervisor.h):
// what a run records of each cell (report.json, the filed wheel, the exit code), with no
// process started.

#include "app/build.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../support/fake_supervisor.h"
#include "../support/fake_system.h"
#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "wheel/layout.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(AppBuild, RecordsEachCellsOutcomeAndFilesOnlyTheGoodWheel) {
  test::ScratchDir dir("app-build");
  const fs::path matrix = dir.path() / "m.yaml";
  std::ofstream(matrix) << "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\n"
                           "python: [cp311, cp312]\nprovision: host\ncommand: [build-it, \"{out}\"]\n";
  System system = testing::fake_system(dir.path() / "cache", 4, 16);
  Options options;
  options.matrix = matrix.string();
  options.output_dir = (dir.path() / "wheelhouse").string();
  const Plan plan = make_plan(options, system);
  ASSERT_EQ(plan.cells.size(), 2u);
  const std::string good = plan.cells.at(1).id;  // cp312
  const std::string bad = plan.cells.at(0).id;   // cp311: its command fails
  ASSERT_THAT(good, HasSubstr("cp312"));
  const std::string good_name = wheel_filename(plan.cells.at(1).cell);

  int started = 0;  // counted here: build() destroys its supervisor before it returns
  system.make_supervisor = [&]() -> std::unique_ptr<ProcessSupervisor> {
    auto s = std::make_unique<test::FakeSupervisor>();
    s->failing = {bad};
    s->on_start = [&good, &good_name, &started](test::FakeSupervisor::Id, const ProcessSpec& spec) {
      ++started;
      // The command's wheel, as a real build would leave it in {out}: a valid one for cp312.
      const fs::path out = test::env_value(spec, "FABUILD_OUT_DIR");
      const std::string id = test::env_value(spec, "FABUILD_CELL_ID");
      fs::remove(out / (id + ".whl"));
      if (id != good) return;
      test::TestWheel w;
      w.version = w.metadata_version = good_name.substr(std::string("flash_attn-").size(),
                                                        good_name.find("-cp312") - std::string("flash_attn-").size());
      w.tag = "cp312-cp312-linux_x86_64";
      w.write(out);
    };
    return s;
  };
  // The run's clock: it starts at t0 and reads 90 s later when the run ends, however long the
  // test took (the runner's own times count from t0, so t0 is the real clock's now).
  const auto t0 = std::chrono::steady_clock::now();
  int reads = 0;
  system.steady_now = [t0, &reads] { return reads++ == 0 ? t0 : t0 + std::chrono::seconds(90); };
  std::ostringstream out;
  const ExitCode code = build(plan, options, system, out);
  EXPECT_EQ(code, kExitCellFailed) << out.str();
  EXPECT_EQ(started, 2);  // one process per cell: its command

  const fs::path house = dir.path() / "wheelhouse";
  const fs::path filed = house / "fa2.8.3" / "torch2.11" / "cu130" / good_name;
  EXPECT_TRUE(fs::exists(filed)) << out.str();
  std::ifstream sums(filed.parent_path() / "SHA256SUMS");
  std::stringstream sums_text;
  sums_text << sums.rdbuf();
  EXPECT_THAT(sums_text.str(), HasSubstr(good_name));

  std::ifstream report_file(house / "report.json");
  ASSERT_TRUE(report_file.good());
  const auto report = nlohmann::json::parse(report_file);
  std::map<std::string, nlohmann::json> cells;
  for (const auto& c : report.at("cells")) cells[c.at("id").get<std::string>()] = c;
  ASSERT_EQ(cells.count(good), 1u);
  ASSERT_EQ(cells.count(bad), 1u);
  EXPECT_EQ(cells[good].at("status"), "ok");
  EXPECT_EQ(cells[good].at("wheel"), "fa2.8.3/torch2.11/cu130/" + good_name);
  EXPECT_EQ(cells[bad].at("status"), "failed");
  EXPECT_THAT(cells[bad].at("log").get<std::string>(), HasSubstr(bad + ".log"));
  EXPECT_EQ(report.at("started"), "2026-11-24T12:00:00Z");  // the fake clock's
  EXPECT_EQ(report.at("elapsed_s"), 90.0) << "the run's elapsed time is the System clock's";
  EXPECT_EQ(reads, 2);
  EXPECT_THAT(out.str(), HasSubstr(bad));
  EXPECT_TRUE(fs::exists(house / "index.html"));
}

}  // namespace
}  // namespace fabuild
