// A wheel's modes do not depend on the umask of whoever builds it (docs/security.md,
// "Reproducible wheels"): the build runs under umask 022 (cell_run.h, with_fixed_umask) and the
// source tree it reads gets fixed modes first (source_steps.h, modes_step). Real processes and
// real files: a umask is the process's, and only the disk keeps modes.

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/fake_clock.h"
#include "app/cell_run.h"
#include "app/site_build.h"
#include "app/source_steps.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "plan_fixture.h"
#include "util/command.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

constexpr fs::perms kRead =
    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;  // rw-r--r--
constexpr fs::perms kRun = kRead | fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;

// The caller's umask while it lives, as a user's shell would have set it.
class CallersUmask {
 public:
  explicit CallersUmask(mode_t mask) : was_(::umask(mask)) {}
  ~CallersUmask() { ::umask(was_); }
  CallersUmask(const CallersUmask&) = delete;
  CallersUmask& operator=(const CallersUmask&) = delete;

 private:
  mode_t was_;
};

fs::perms mode_of(const fs::path& p) { return fs::symlink_status(p).permissions(); }

// What a build leaves (a file, a directory), made by a process fabuild starts, under 0002.
TEST(FixedModes, TheBuildRunsUnderUmask022WhateverTheCallersIs) {
  test::ScratchDir dir("fabuild-umask");
  const CallersUmask caller(0002);
  const std::string script = "touch \"$1/made\" && mkdir \"$1/dir\" && printf '%s|' \"$@\" > \"$1/args\"";
  const auto build = [&](const std::string& name, bool fixed) {
    fs::create_directories(dir.path() / name);
    std::vector<std::string> argv = {"/bin/sh", "-c", script, "build", (dir.path() / name).string(), "a \"b\" $c"};
    if (fixed) argv = with_fixed_umask(argv);
    ProcessCommandRunner runner;
    const CommandResult r = runner.run(argv, {"PATH=/usr/bin:/bin"}, std::chrono::seconds(30));
    EXPECT_TRUE(r.ok()) << r.output;
    return dir.path() / name;
  };
  const fs::path loose = build("as-called", false);
  EXPECT_EQ(mode_of(loose / "made"), kRead | fs::perms::group_write) << "the check below can fail";
  const fs::path fixed = build("fixed", true);
  EXPECT_EQ(mode_of(fixed / "made"), kRead);
  EXPECT_EQ(mode_of(fixed / "dir"), kRun);
  std::ifstream args(fixed / "args");
  const std::string said((std::istreambuf_iterator<char>(args)), std::istreambuf_iterator<char>());
  EXPECT_EQ(said, (fixed).string() + "|a \"b\" $c|") << "the build's argv reaches it word for word";
}

// A source directory checked out under umask 0002 (rw-rw-r--, rwxrwxr-x) or with a private
// file: the cell's own tree has the modes a checkout under 022 would have.
TEST(FixedModes, TheCellsSourceTreeHasFixedModesWhateverTheCheckoutHad) {
  test::ScratchDir dir("fabuild-umask");
  const fs::path source = dir.path() / "checkout";
  fs::create_directories(source / "pkg");
  std::ofstream(source / "pkg" / "__init__.py") << "\n";
  std::ofstream(source / "setup.py") << "setup()\n";
  std::ofstream(source / "run.sh") << "#!/bin/sh\n";
  using P = fs::perms;
  fs::permissions(source / "pkg" / "__init__.py", kRead | P::group_write);
  fs::permissions(source / "setup.py", P::owner_read | P::owner_write);
  fs::permissions(source / "run.sh", kRun | P::group_write);
  fs::permissions(source / "pkg", kRun | P::group_write);

  const auto cells = std::make_shared<const std::vector<Cell>>(
      expand(parse_matrix("versions: [\"2.8.3\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\npython: [cp312]\n"
                          "torch_index: https://torch-index.invalid/whl\n",
                          "m.yaml"))
          .cells);
  const PlannedCell p{cells, cells->at(0), {}, cells->at(0).id(), {}, {}};
  const CallersUmask caller(0002);
  const auto files = std::make_shared<RealFiles>();
  const fs::path staging = dir.path() / "stage";
  fs::create_directories(staging);
  CellRun run;
  std::vector<Mount> mounts;
  const SourceSpec spec{SourceSpec::Kind::kPath, source.string(), "", "", {}};
  add_source_steps(run,
                   SourceSteps{&p, &spec, "/m", nullptr, source, staging, staging / "src", false,
                               std::make_shared<CellFindings>(test::FakeClock().now()), files},
                   mounts);
  run.steps.push_back(modes_step(staging / "src", files));
  Facts facts;
  StepContext ctx{run, facts, {}};
  for (const Step& s : run.steps) {
    ASSERT_TRUE(s.run_inline) << s.name << " is a process";
    const StepResult done = s.run_inline(ctx);
    ASSERT_TRUE(done) << s.name << ": " << done.error().what;
  }
  const fs::path tree = staging / "src";
  EXPECT_EQ(mode_of(tree / "pkg" / "__init__.py"), kRead);
  EXPECT_EQ(mode_of(tree / "setup.py"), kRead);
  EXPECT_EQ(mode_of(tree / "run.sh"), kRun);
  EXPECT_EQ(mode_of(tree / "pkg"), kRun);
  EXPECT_EQ(mode_of(tree), kRun);
}

// Where the two sit in a wheel cell's steps: the tree fixed after it is whole, the build after it
// under the fixed umask; a Windows host's build as it was (no umask there).
TEST_F(AppPlan, AWheelCellFixesItsTreesModesAndBuildsUnderUmask022) {
  write_matrix("python: [cp312]\n");
  const SiteBuild b = plan_site_build(plan(), {0}, false, system_);
  ASSERT_EQ(b.cells.size(), 1u);
  std::vector<std::string> names;
  const Step* build = nullptr;
  for (const Step& s : b.cells[0].steps) {
    names.push_back(s.name);
    if (s.name == "build") build = &s;
  }
  const auto at = [&](const char* name) { return std::find(names.begin(), names.end(), name) - names.begin(); };
  EXPECT_LT(at("copy"), at("modes"));
  EXPECT_LT(at("modes"), at("build"));
  ASSERT_NE(build, nullptr);
  ASSERT_GE(build->argv.size(), 5u);
  EXPECT_THAT(std::vector<std::string>(build->argv.begin(), build->argv.begin() + 4),
              ElementsAre("/bin/sh", "-c", "umask 022 && exec \"$@\"", "fabuild-build"));
  EXPECT_THAT(std::vector<std::string>(build->argv.begin() + 4, build->argv.end()),
              ElementsAre(::testing::HasSubstr("python"), "setup.py", "bdist_wheel", "--dist-dir", ::testing::_));
}

}  // namespace
}  // namespace fabuild
