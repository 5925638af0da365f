// provision: host sites (app/host_sites.h), from make_plan over a fake System whose runner
// answers nvcc's and Python's probes: a cell's toolkit, interpreter and compiler, each asked
// once per run, a cell whose interpreter is missing failing at "python" with what was tried, and
// which of fabuild's cache entries a site marks used (through fake files).

#include "app/host_sites.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "../support/fake_files.h"
#include "plan_fixture.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST_F(AppPlan, AHostCellsSiteIsTheToolkitAndPythonFoundOnceForTheRun) {
  write_matrix("python: [cp311, cp312]\n");
  const Plan p = plan();
  ASSERT_EQ(p.cells.size(), 2u);
  HostSites sites(p, system_.env, *runner_, *system_.files, false);
  const SiteResult first = sites.site_for(p.cells[1].cell);
  ASSERT_TRUE(first) << first.error().what;
  EXPECT_EQ(first->toolkit.home, cuda_.string());
  EXPECT_EQ(first->toolkit.version.str(), "13.0");
  EXPECT_EQ(first->python.path, python_.string());
  EXPECT_EQ(first->compiler, "c++ (Debian 12.2.0-14) 12.2.0");
  const auto nvcc_questions = [&] {
    return std::count_if(runner_->asked.begin(), runner_->asked.end(),
                         [&](const auto& argv) { return argv.at(0) == (cuda_ / "bin" / "nvcc").string(); });
  };
  const auto asked = nvcc_questions();
  EXPECT_GE(asked, 1);
  ASSERT_TRUE(sites.site_for(p.cells[0].cell));
  EXPECT_EQ(nvcc_questions(), asked) << "the CUDA set's toolkit is looked for once";
  EXPECT_EQ(&sites.toolkit_for(p.cells[0].cell), &sites.toolkit_for(p.cells[1].cell));
}

TEST_F(AppPlan, AHostCellWithoutItsPythonFailsAtPythonNamingWhatWasTried) {
  write_matrix("python: [cp313]\n");
  const Plan p = plan();
  HostSites sites(p, system_.env, *runner_, *system_.files, false);
  const SiteResult site = sites.site_for(p.cells.at(0).cell);
  ASSERT_FALSE(site);
  EXPECT_EQ(site.error().step, "python");
  EXPECT_THAT(site.error().what, HasSubstr("3.13"));
}

TEST_F(AppPlan, AToolkitFromPyPIIsMarkedUsedOnceAndAHostToolkitNever) {
  write_matrix("python: [cp312]\ntoolkit: pip\n");
  const Plan p = plan();
  const Cell& cell = p.cells.at(0).cell;
  test::FakeFiles scratch;
  const ToolkitChoice first = HostSites(p, system_.env, *runner_, scratch, false).toolkit_for(cell);
  ASSERT_TRUE(first.install) << "CUDA 13.0 from PyPI, installed before the cell";
  const fs::path entry = first.install->dir();
  EXPECT_EQ(entry.parent_path(), p.cache_root / "toolkits");

  test::FakeFiles files;
  files.add_directory(entry);
  HostSites sites(p, system_.env, *runner_, files, false);
  ASSERT_TRUE(sites.site_for(cell));
  ASSERT_TRUE(sites.site_for(cell));
  EXPECT_THAT(files.touched(), ElementsAre(entry)) << "once per run: trims keep it";
  EXPECT_THAT(scratch.touched(), IsEmpty()) << "an entry that is not there is not made by marking it";
  EXPECT_FALSE(scratch.exists(entry));

  write_matrix("python: [cp312]\ntoolkit: host\n");
  const Plan on_host = plan();
  test::FakeFiles untouched;
  untouched.add_directory(entry);
  HostSites host(on_host, system_.env, *runner_, untouched, false);
  ASSERT_TRUE(host.site_for(on_host.cells.at(0).cell));
  EXPECT_THAT(untouched.touched(), IsEmpty()) << "the host's own toolkit is no entry of fabuild's cache";
}

}  // namespace
}  // namespace fabuild
