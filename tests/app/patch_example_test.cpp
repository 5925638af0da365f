// The example patch matrix/windows.yaml ships (matrix/patches/fa-2.8.3-build-target.patch),
// planned from the real matrix file and applied by the cell's own patch step (GNU patch, as
// source_steps.cpp runs it) to a setup.py excerpt written here: the lines the patch's context
// needs and a few that read IS_ROCM as FlashAttention's setup.py does. Before the patch, a
// BUILD_TARGET of "cuda " (cmd's `set BUILD_TARGET=cuda `) stops it with the NameError users
// report; after it, "cuda " builds for CUDA and a value it does not know is refused by name.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "../support/fake_system.h"
#include "../support/scratch_dir.h"
#include "app/plan.h"
#include "app/source_steps.h"
#include "util/path_search.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const char* kExcerpt = R"(import os

IS_HIP_EXTENSION = False  # torch.utils.cpp_extension's, on a CUDA build of torch

# ninja build does not work unless include_dirs are abs path
this_dir = os.path.dirname(os.path.abspath(__file__))

BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")

if BUILD_TARGET == "auto":
    if IS_HIP_EXTENSION:
        IS_ROCM = True
    else:
        IS_ROCM = False
else:
    if BUILD_TARGET == "cuda":
        IS_ROCM = False
    elif BUILD_TARGET == "rocm":
        IS_ROCM = True

PACKAGE_NAME = "flash_attn"

print("rocm" if IS_ROCM else "cuda")
)";

std::string quoted(const std::string& s) { return "'" + s + "'"; }

struct Ran {
  int status;
  std::string output;
};
// `command` through the shell, its stdout and stderr together.
Ran run(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  char buffer[512];
  while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pipe == nullptr ? -1 : ::pclose(pipe);
  return {status, output};
}

TEST(PatchExample, TheWindowsMatrixsPatchFixesTheIsRocmNameError) {
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  if (find_in_path("patch", path).empty() || find_in_path("python3", path).empty()) {
    GTEST_SKIP() << "needs GNU patch and python3 on PATH (scripts/install-deps.sh installs them)";
  }
  test::ScratchDir dir("patch-example");
  Options options;
  options.matrix = std::string(FABUILD_SOURCE_DIR) + "/matrix/windows.yaml";
  options.output_dir = (dir.path() / "wheelhouse").string();
  const Plan plan = make_plan(options, testing::fake_system(dir.path() / "cache"));
  ASSERT_EQ(plan.cells.size(), 1u);
  ASSERT_EQ(plan.cells[0].patches.size(), 1u);
  const PatchFile& patch = plan.cells[0].patches[0];
  EXPECT_EQ(patch.name, "patches/fa-2.8.3-build-target.patch");

  const fs::path tree = dir.path() / "src";
  fs::create_directories(tree);
  std::ofstream(tree / "setup.py") << kExcerpt;
  const std::string setup = quoted((tree / "setup.py").string());
  const Ran before = run("BUILD_TARGET='cuda ' python3 " + setup);
  EXPECT_NE(before.status, 0);
  EXPECT_THAT(before.output, HasSubstr("NameError: name 'IS_ROCM' is not defined"));

  std::string command = "cd " + quoted(tree.string()) + " &&";
  for (const std::string& arg : patch_argv(patch)) command += " " + quoted(arg);
  const Ran patched = run(command);
  ASSERT_EQ(patched.status, 0) << patched.output;

  EXPECT_EQ(run("BUILD_TARGET='cuda ' python3 " + setup).output, "cuda\n");
  EXPECT_EQ(run("BUILD_TARGET=CUDA python3 " + setup).output, "cuda\n");
  EXPECT_EQ(run("BUILD_TARGET=rocm python3 " + setup).output, "rocm\n");
  EXPECT_EQ(run("python3 " + setup).output, "cuda\n");
  const Ran unknown = run("BUILD_TARGET=metal python3 " + setup);
  EXPECT_NE(unknown.status, 0);
  EXPECT_THAT(unknown.output, HasSubstr("ValueError: BUILD_TARGET='metal': use auto, cuda or rocm"));
  // A second application is refused (patch --forward), as a re-run of the cell never patches twice.
  EXPECT_NE(run(command).status, 0);
}

}  // namespace
}  // namespace fabuild
