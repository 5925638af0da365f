// A torch window written in `torch:` (matrix/torch_range.h): ">=2.10", ">=2.10,<2.14".

#include "matrix/torch_range.h"

#include <gtest/gtest.h>

#include "matrix/axis_set.h"
#include "matrix/loader.h"
#include "util/error.h"

namespace fabuild {
namespace {

Version V(const char* s) { return *Version::parse(s); }

TEST(TorchRange, AFloorAndAnOptionalBoundAsPipWritesThem) {
  const auto open = parse_torch_range(">=2.10");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->floor, V("2.10"));
  EXPECT_FALSE(open->below);
  EXPECT_EQ(open->str(), ">=2.10");
  const auto bounded = parse_torch_range(" >= 2.10 , < 2.14 ");
  ASSERT_TRUE(bounded);
  EXPECT_EQ(*bounded->below, V("2.14"));
  EXPECT_EQ(bounded->str(), ">=2.10,<2.14");
}

TEST(TorchRange, HoldsTheReleasesFromItsFloorToBelowItsBound) {
  const TorchRange w = *parse_torch_range(">=2.10,<2.14");
  EXPECT_FALSE(w.holds(V("2.9.1")));
  EXPECT_TRUE(w.holds(V("2.10.0")));
  EXPECT_TRUE(w.holds(V("2.13.1")));
  EXPECT_FALSE(w.holds(V("2.14.0")));
  EXPECT_TRUE(parse_torch_range(">=2.10")->holds(V("3.0.0")));
}

TEST(TorchRange, WhatIsNoRangeSaysWhy) {
  std::string why;
  EXPECT_FALSE(parse_torch_range("2.10", &why));
  EXPECT_FALSE(parse_torch_range(">=2", &why));
  EXPECT_NE(why.find("floor '2'"), std::string::npos) << why;
  EXPECT_FALSE(parse_torch_range(">=2.10,<=2.13", &why));
  EXPECT_NE(why.find("written with <"), std::string::npos) << why;
  EXPECT_FALSE(parse_torch_range(">=2.13,<2.11", &why));
  EXPECT_EQ(why, "its bound 2.11 is not above its floor 2.13");
  EXPECT_FALSE(parse_torch_range(">=2.10,2.13", &why));
  EXPECT_FALSE(parse_torch_range(">=2.10,<x", &why));
}

TEST(TorchRange, TheMatrixTakesItBesideASeriesItHoldsAndRefusesABadOneWhereItIs) {
  const MatrixSpec spec = parse_matrix(
      "versions: [\"2.8.3\"]\ntorch: [\"2.11\", \">=2.11,<2.14\"]\ncuda: [\"13.0\"]\npython: [cp312]\n", "m.yaml");
  ASSERT_EQ(spec.torch.size(), 1U);
  ASSERT_EQ(spec.torch_ranges.size(), 1U);
  EXPECT_EQ(spec.torch_ranges[0].value.str(), ">=2.11,<2.14");
  try {
    parse_matrix("versions: [\"2.8.3\"]\ntorch: [\">=2.13,<2.11\"]\ncuda: [\"13.0\"]\npython: [cp312]\n", "m.yaml");
    FAIL() << "a bound below the floor was taken";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("m.yaml:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is not above its floor"), std::string::npos) << e.what();
  }
}

TEST(TorchRange, SetTakesABoundAfterTheCommaAsPartOfTheRange) {
  EXPECT_EQ(parse_axis_set("torch=>=2.10,<2.14,2.9").values, (std::vector<std::string>{">=2.10,<2.14", "2.9"}));
  EXPECT_EQ(parse_axis_set("torch=2.9,<2.14").values, (std::vector<std::string>{"2.9", "<2.14"}))
      << "a bound with no range before it stays, and is refused as a torch value";
}

}  // namespace
}  // namespace fabuild
