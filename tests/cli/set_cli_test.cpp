// --set AXIS=VALUES from the command line: the plan says which flags replaced axes, the
// --ci-matrix jobs carry them, and a bad one is exit 2 naming the flag.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_binary.h"

namespace fabuild {
namespace {

using test::run_fabuild;
using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kBudget = {
    "--cores", "16", "--memory-gb", "128", "--torch-index", "https://torch-index.invalid/whl"};

std::vector<std::string> args(std::vector<std::string> a) {
  a.insert(a.end(), kBudget.begin(), kBudget.end());
  return a;
}

TEST(SetCli, ThePlanBuildsTheSetAxesAndSaysSo) {
  const auto r = run_fabuild(args({"matrix/example.yaml", "--set", "torch=2.12,2.13", "--set", "python=cp312", "-n"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("matrix/example.yaml --set torch=2.12,2.13 --set python=cp312: flash-example, 2 cells"));
  EXPECT_THAT(r.out, HasSubstr("example0.1.0-torch2.12-cu130-cp312-linux_x86_64"));
  EXPECT_THAT(r.out, HasSubstr("example0.1.0-torch2.13-cu130-cp312-linux_x86_64"));
  EXPECT_THAT(r.out, Not(HasSubstr("torch2.11")));
  EXPECT_THAT(r.out, Not(HasSubstr("cp311")));
  // The matrix may follow the flag: one AXIS=VALUES per --set.
  const auto before = run_fabuild(args({"--set", "python=cp313", "matrix/example.yaml", "--list", "--format", "json"}));
  ASSERT_EQ(before.code, 0) << before.err;
  EXPECT_EQ(nlohmann::json::parse(before.out).size(), 1U) << before.out;
}

TEST(SetCli, EveryCiJobCarriesTheSetFlags) {
  const auto r = run_fabuild({"matrix/example.yaml", "--set", "torch=2.13", "--ci-matrix", "github"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto jobs = nlohmann::json::parse(r.out)["include"];
  ASSERT_FALSE(jobs.empty());
  for (const auto& job : jobs) {
    const std::string a = job["args"];
    EXPECT_TRUE(a.starts_with("--set torch=2.13 ")) << a;
    EXPECT_THAT(a, HasSubstr("torch2.13")) << "the job's cells exist only with the flag";
  }
}

TEST(SetCli, BadFlagsAreExit2NamingTheFlag) {
  const auto axis = run_fabuild({"matrix/example.yaml", "--set", "wheelhouse=/tmp", "-n"});
  EXPECT_EQ(axis.code, 2);
  EXPECT_THAT(axis.err, HasSubstr("fabuild: error: --set wheelhouse=/tmp: --set replaces an axis of the matrix"));
  const auto value = run_fabuild({"matrix/example.yaml", "--set", "cuda=13.7", "-n"});
  EXPECT_EQ(value.code, 2);
  EXPECT_THAT(value.err, HasSubstr("fabuild: error: --set cuda=13.7: CUDA 13.7 is newer than any CUDA"));
}

}  // namespace
}  // namespace fabuild
