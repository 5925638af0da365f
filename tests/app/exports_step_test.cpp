#include "app/exports_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "../support/fake_clock.h"
#include "../support/scratch_dir.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "util/path_search.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

Cell fa3_cell() {
  return expand(parse_matrix("package: flash-attn-3\nversions: [\"3.0.0\"]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\n"
                             "python: [cp312]\nsource: {path: fa}\ntorch_index: https://torch-index.invalid/whl\n",
                             "m.yaml"))
      .cells.at(0);
}

// FlashAttention 3 builds flash_api_stable.cpp against torch >= the target_version its setup.py
// names: that library's C++ entry points are run_mha_fwd/run_mha_bwd, not mha_fwd/mha_bwd.
TEST(ExportsStep, TheExportListFollowsTheBuildFlavourTheSourceAndTorchGive) {
  test::ScratchDir dir("exports-flavour");
  const RealFiles files;
  const Cell cell = fa3_cell();
  EXPECT_THAT(expected_exports(cell, dir.path(), "2.11.0+cu130", files),
              ElementsAre("mha_fwd", "mha_bwd"));  // no stable source
  std::ofstream(dir.path() / "flash_api_stable.cpp") << "// stable\n";
  std::ofstream(dir.path() / "setup.py") << "    target_version = parse(\"2.9.0.dev20250830\")\n";
  EXPECT_THAT(expected_exports(cell, dir.path(), "2.11.0+cu130", files), ElementsAre("run_mha_fwd", "run_mha_bwd"));
  EXPECT_THAT(expected_exports(cell, dir.path(), "2.9.0", files), ElementsAre("run_mha_fwd", "run_mha_bwd"));
  EXPECT_THAT(expected_exports(cell, dir.path(), "2.8.0+cu128", files), ElementsAre("mha_fwd", "mha_bwd"));
  EXPECT_THAT(expected_exports(cell, dir.path(), "", files), ElementsAre("mha_fwd", "mha_bwd"));  // torch unknown
}

// A win_amd64 library built as MSVC builds one exports its module's PyInit_ and nothing the
// source does not mark for export: the check requires the PyInit_, records the C++ entry points
// it finds and names in the log those it does not.
class WindowsExports : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_in_path("x86_64-w64-mingw32-g++", std::getenv("PATH") ? std::getenv("PATH") : "").empty()) {
      GTEST_SKIP() << "x86_64-w64-mingw32-g++ is not installed (apt-get install mingw-w64): no .pyd to check";
    }
    cell = expand(parse_matrix("versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n"
                               "platform: [win_amd64]\nprovision: host\n",
                               "m.yaml"))
               .cells.at(0);
    run.id = "fa";
    run.log_path = (dir.path() / "cell.log").string();
  }
  // A .pyd in the unpacked wheel exporting `exports` (a .def file's lines).
  void build_pyd(const std::string& exports) {
    fs::create_directories(dir.path() / "unpacked");
    std::ofstream(dir.path() / "m.cpp") << "extern \"C\" int PyInit_flash_attn_2_cuda() { return 0; }\n"
                                           "namespace flash { int mha_fwd(int x) { return x; } }\n";
    std::ofstream(dir.path() / "m.def") << "EXPORTS\n" << exports;
    const std::string cmd = "x86_64-w64-mingw32-g++ -shared -s -o '" +
                            (dir.path() / "unpacked" / "flash_attn_2_cuda.cp312-win_amd64.pyd").string() + "' '" +
                            (dir.path() / "m.cpp").string() + "' '" + (dir.path() / "m.def").string() + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  StepResult check() {
    const Step step = exports_step(cell, dir.path() / "unpacked", dir.path(), findings, std::make_shared<RealFiles>());
    StepContext ctx{run, facts, {}};
    return step.run_inline(ctx);
  }
  std::string log() {
    std::ifstream in(run.log_path);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  test::ScratchDir dir{"exports-windows"};
  Cell cell = fa3_cell();
  CellRun run;
  Facts facts;
  std::shared_ptr<CellFindings> findings = std::make_shared<CellFindings>(test::FakeClock().now());
};

TEST_F(WindowsExports, ThePyInitIsRequiredAndTheEntryPointsAreRecorded) {
  EXPECT_EQ(extension_pattern(cell), "flash_attn_2_cuda*.pyd");
  build_pyd("  PyInit_flash_attn_2_cuda\n  _ZN5flash7mha_fwdEi\n");
  const StepResult r = check();
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(findings->exports, (std::map<std::string, std::string>{{"mha_fwd", "flash::mha_fwd(int)"}}));
  EXPECT_THAT(log(), ::testing::HasSubstr("not exported (MSVC exports only what the source marks "
                                          "__declspec(dllexport)): mha_varlen_fwd, mha_bwd"));
}

TEST_F(WindowsExports, ALibraryWithoutItsPyInitFails) {
  build_pyd("  _ZN5flash7mha_fwdEi\n");
  const StepResult r = check();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().what,
            "flash_attn_2_cuda.cp312-win_amd64.pyd does not export PyInit_flash_attn_2_cuda: Python "
            "cannot import it");
}

}  // namespace
}  // namespace fabuild
