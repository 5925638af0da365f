// --set AXIS=VALUES: an axis of the matrix replaced for one run, read and checked like the
// file's own value, its errors and values located at the flag.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.h"

namespace fabuild {
namespace {

using test::ids;
using test::kBase;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<AxisSet> sets(std::initializer_list<const char*> texts) {
  std::vector<AxisSet> out;
  for (const char* t : texts) out.push_back(parse_axis_set(t));
  return out;
}

Expansion expand_with(const std::vector<AxisSet>& s, const std::string& yaml = kBase) {
  MatrixSpec spec = parse_matrix(yaml, "m.yaml", s);
  spec.torch_index = "https://torch-index.invalid/whl";
  return expand(spec);
}

std::string error_with(const std::vector<AxisSet>& s, const std::string& yaml = kBase) {
  try {
    expand_with(s, yaml);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(AxisSet, ParsesAxisAndCommaSeparatedValues) {
  const AxisSet s = parse_axis_set("torch=2.12, 2.13");
  EXPECT_EQ(s.axis, "torch");
  EXPECT_THAT(s.values, ElementsAre("2.12", "2.13"));
  EXPECT_EQ(s.flag(), "--set torch=2.12, 2.13");
  EXPECT_EQ(parse_axis_set("fa=2.8.3").axis, "versions") << "--fa's name reads as the matrix's versions";
}

TEST(AxisSet, MalformedTextsAreRefusedNamingTheFlag) {
  auto refusal = [](const char* text) -> std::string {
    try {
      parse_axis_set(text);
    } catch (const UserError& e) {
      EXPECT_EQ(e.code(), kExitBadConfig);
      return std::string(e.what()) + " | " + e.hint();
    }
    return "accepted";
  };
  EXPECT_THAT(refusal("torch"), HasSubstr("--set torch: --set takes AXIS=VALUES"));
  EXPECT_THAT(refusal("=2.12"), HasSubstr("--set takes AXIS=VALUES"));
  EXPECT_THAT(refusal("wheelhouse=/x"), HasSubstr("'wheelhouse' is not one"));
  EXPECT_THAT(refusal("wheelhouse=/x"), HasSubstr("versions, artifact, torch, cuda"));
  EXPECT_THAT(refusal("torch=2.12,,2.13"), HasSubstr("--set torch=2.12,,2.13: --set torch: an empty value"));
  EXPECT_THAT(refusal("torch="), HasSubstr("--set torch: "));
}

TEST(AxisSet, ReplacesTheAxisOfTheFile) {
  const Expansion e = expand_with(sets({"torch=2.8", "python=cp312"}));
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.8-cu126-cp312-linux_x86_64", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64"));
}

TEST(AxisSet, AddsAnAxisTheFileLeavesAtItsDefault) {
  const Expansion e = expand_with(sets({"torch=2.8", "cuda=12.8", "python=cp312", "cxx11_abi=TRUE"}));
  ASSERT_EQ(e.cells.size(), 1U);
  EXPECT_EQ(e.cells[0].abi, Abi::kTrue);
  const MatrixSpec archs = parse_matrix(kBase, "m.yaml", sets({"archs=80,90"}));
  ASSERT_TRUE(archs.archs.all.has_value());
  EXPECT_EQ(to_string(archs.archs.all->value), "80;90") << "an arch list, as the file writes it";
  EXPECT_EQ(archs.archs.all->where.str(), "--set archs=80,90");
}

TEST(AxisSet, ItsValuesAreCheckedLikeTheFileAndLocatedAtTheFlag) {
  EXPECT_THAT(error_with(sets({"python=cp2"})), HasSubstr("--set python=cp2: "));
  EXPECT_THAT(error_with(sets({"torch=2.8,2.8"})), HasSubstr("--set torch=2.8,2.8: torch '2.8' is listed twice"));
  EXPECT_THAT(error_with(sets({"cuda=13.7"})), HasSubstr("--set cuda=13.7: "));
  const MatrixSpec spec = parse_matrix(kBase, "m.yaml", sets({"torch=2.8"}));
  ASSERT_EQ(spec.torch.size(), 1U);
  EXPECT_EQ(spec.torch[0].where.str(), "--set torch=2.8") << "a value's place is the flag, not a line of the file";
  EXPECT_EQ(spec.python[0].where.str(), "m.yaml:5:10") << "the file's own axes keep their places";
}

TEST(AxisSet, OneAxisTwiceIsRefused) {
  EXPECT_THAT(error_with(sets({"python=cp311", "python=cp312"})),
              HasSubstr("--set python=cp312: --set gives python twice (first as --set python=cp311)"));
}

}  // namespace
}  // namespace fabuild
