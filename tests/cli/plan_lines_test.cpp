// The plan's per-cell lines say what is set: ROCm cells' GPU_ARCHS and MAX_JOBS (no
// NVCC_THREADS), Windows cells' MAX_JOBS=1 until their memory per job is given, and where a
// host toolkit is looked for rather than a toolchains/ entry that may not exist.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"
#include "run_binary.h"

namespace fabuild {
namespace {

using test::run_fabuild;
using ::testing::HasSubstr;
using ::testing::Not;

std::string matrix(const std::string& name, const std::string& text) {
  const auto path = test::process_file(name);
  std::ofstream(path) << text;
  return path.string();
}

const std::vector<std::string> kBudget = {
    "--cores", "16", "--memory-gb", "128", "--torch-index", "https://torch-index.invalid/whl", "-n", "-v"};

std::vector<std::string> plan_args(const std::string& m) {
  std::vector<std::string> a{m};
  a.insert(a.end(), kBudget.begin(), kBudget.end());
  return a;
}

TEST(PlanLines, ARocmCellShowsGpuArchsAndMaxJobsOnly) {
  const auto r = run_fabuild(plan_args(matrix(
      "rocm.yaml",
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\nrocm: [\"6.3\"]\npython: [cp312]\nprovision: "
      "container\n")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("per cell:   GPU_ARCHS=ARCHS, MAX_JOBS=JOBS,"));
  EXPECT_THAT(r.out, HasSubstr("JOBS is MAX_JOBS (hipcc: one thread a job)"));
  EXPECT_THAT(r.out, HasSubstr("/torch<series>/rocm<xy>/"));
  EXPECT_THAT(r.out, Not(HasSubstr("FLASH_ATTN_CUDA_ARCHS")));
  EXPECT_THAT(r.out, Not(HasSubstr("NVCC_THREADS")));
}

TEST(PlanLines, AWindowsCellRunsOneJobAndSaysWhy) {
  const auto r = run_fabuild(plan_args(matrix(
      "win.yaml",
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\nplatform: "
      "[win_amd64]\nprovision: host\narchs: \"80\"\n")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  jobs    MAX_JOBS=1 NVCC_THREADS=1"));
  EXPECT_THAT(r.out, HasSubstr("MAX_JOBS 1 on Windows: the Windows manual build's setting against out-of-memory"));
  EXPECT_THAT(r.out, HasSubstr("%CUDA_PATH_V12_8%, %CUDA_PATH_V128%, %CUDA_PATH%"));
  EXPECT_THAT(r.out, Not(HasSubstr("nvcc from toolchains/ entry")));
}

}  // namespace
}  // namespace fabuild
