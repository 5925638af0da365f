// A wheel's proofs under torch releases (app/sweep_steps.h), from what each release's check
// reported (py/torch_sweep.py's fact lines).

#include "app/sweep_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

namespace fabuild {
namespace {

using ::testing::HasSubstr;

const char* kSchema =
    "flash_example::fwd(Tensor q, Tensor k, Tensor v, bool causal=False, float softmax_scale=1.) -> Tensor[]";

std::string report(const std::string& series, bool ok, const std::string& schema, const std::string& detail = "loads") {
  return fmt::format(
      R"({{"series":"{}","torch":"{}.0+cu130","cuda":"13.0","ok":{},"detail":"{}","gpu":"","ops":["{}"]}})", series,
      series, ok ? "true" : "false", detail, schema);
}

Facts reported(std::initializer_list<std::pair<std::string, std::string>> by_series) {
  Facts facts{{"torch_version", "2.11.0+cu130"}};
  for (const auto& [series, line] : by_series) facts["torch_proof_" + series] = line;
  return facts;
}

TEST(SweepSteps, ProofsAreOrderedByTorchAndKeepWhatEachCheckSaid) {
  const Facts facts = reported({{"2.13", report("2.13", true, kSchema)},
                                {"2.11", report("2.11", true, kSchema)},
                                {"2.9", report("2.9", false, "", "undefined symbol: aoti_torch_x")}});
  const auto proofs = sweep_proofs(facts, "2.11");
  ASSERT_EQ(proofs.size(), 3U);
  EXPECT_EQ(proofs[0].series, "2.9");  // 2.9 before 2.11 and 2.13: versions, not text
  EXPECT_FALSE(proofs[0].ok);
  EXPECT_EQ(proofs[0].detail, "undefined symbol: aoti_torch_x");
  EXPECT_EQ(proofs[1].torch, "2.11.0+cu130");
  EXPECT_EQ(proofs[2].cuda, "13.0");
  EXPECT_TRUE(proofs[2].ok);
}

// A later torch that registers the op with another schema breaks its callers though it loads.
TEST(SweepSteps, AnOpRegisteredDifferentlyThanWhereItWasBuiltFailsThatRelease) {
  const std::string other =
      "flash_example::fwd(Tensor q, Tensor k, Tensor v, bool causal, float softmax_scale) -> Tensor[]";
  const auto proofs =
      sweep_proofs(reported({{"2.11", report("2.11", true, kSchema)}, {"2.15", report("2.15", true, other)}}), "2.11");
  ASSERT_EQ(proofs.size(), 2U);
  EXPECT_TRUE(proofs[0].ok);
  EXPECT_FALSE(proofs[1].ok);
  EXPECT_THAT(proofs[1].detail,
              HasSubstr("its ops register differently than under torch 2.11: " + std::string(kSchema)));
}

TEST(SweepSteps, TheStepAfterFilingFailsForAReleaseTheWheelFailedUnderOrNeverReported) {
  CellRun run;
  Facts facts = reported({{"2.11", report("2.11", true, kSchema)},
                          {"2.12", report("2.12", true, kSchema)},
                          {"2.13", report("2.13", false, "", "undefined symbol: torch_new_thing")}});
  StepContext ctx{run, facts, {}};
  const auto failed = proofs_step({"2.11", "2.12", "2.13"}, "2.11").run_inline(ctx);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().what, "torch 2.13: undefined symbol: torch_new_thing; filed for torch 2.11, 2.12");
  ASSERT_FALSE(proofs_step({"2.11", "2.14"}, "2.11").run_inline(ctx));
  Facts good = reported({{"2.11", report("2.11", true, kSchema)}});
  StepContext ok{run, good, {}};
  EXPECT_TRUE(proofs_step({"2.11"}, "2.11").run_inline(ok));
}

}  // namespace
}  // namespace fabuild
