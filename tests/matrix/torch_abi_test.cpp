// torch's C++ ABI per (series, CUDA build, platform) (CompatTables::torch_abi): torch 2.6's
// cu126 build is C++11 ABI, its cu124 and cu118 builds are not; a cxx11abiFALSE cell against
// a C++11-ABI build is dropped, or built against the old-ABI build under torch_build_for_abi.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.h"

namespace fabuild {
namespace {

using test::error_of;
using test::expand_yaml;
using test::ids;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string k26 =
    "versions: [2.8.3]\ntorch: [\"2.6\"]\ncuda: [\"12.9\"]\npython: [cp312]\ncxx11_abi: [\"FALSE\", \"TRUE\"]\n";

TEST(TorchAbi, BuiltInFactsPerSeriesBuildAndPlatform) {
  const CompatTables t = CompatTables::builtin();
  const auto v = [](const char* s) { return *Version::parse(s); };
  EXPECT_EQ(t.torch_abi_of(v("2.6"), v("12.6"), Platform::kLinuxX86_64), Abi::kTrue);
  EXPECT_EQ(t.torch_abi_of(v("2.6"), v("12.6.3"), Platform::kLinuxX86_64), Abi::kTrue);
  EXPECT_EQ(t.torch_abi_of(v("2.6"), v("12.4"), Platform::kLinuxX86_64), Abi::kFalse);
  EXPECT_EQ(t.torch_abi_of(v("2.6"), v("11.8"), Platform::kLinuxX86_64), Abi::kFalse);
  EXPECT_EQ(t.torch_abi_of(v("2.6"), std::nullopt, Platform::kLinuxX86_64), Abi::kFalse);  // PyPI's: cu124
  EXPECT_EQ(t.torch_abi_of(v("2.6"), v("12.4"), Platform::kLinuxAarch64), Abi::kTrue);
  EXPECT_EQ(t.torch_abi_of(v("2.5"), v("12.4"), Platform::kLinuxX86_64), Abi::kFalse);
  EXPECT_EQ(t.torch_abi_of(v("2.7"), v("11.8"), Platform::kLinuxX86_64), Abi::kTrue);
}

TEST(TorchAbi, AFalseCellAgainstACxx11BuildIsDroppedNamingTheBuildThatWouldServe) {
  const Expansion e = expand_yaml(k26);
  // A 12.9 toolkit picks torch 2.6's cu126 build: C++11 ABI, the default there.
  EXPECT_THAT(ids(e.cells), ElementsAre("fa2.8.3-torch2.6-cu126-cp312-linux_x86_64"));
  EXPECT_EQ(e.cells[0].torch_abi, Abi::kTrue);
  ASSERT_EQ(e.dropped.size(), 1u);
  EXPECT_EQ(e.dropped[0].cell.id(), "fa2.8.3-torch2.6-cu126-cp312-linux_x86_64-cxx11abiFALSE");
  EXPECT_THAT(e.dropped[0].reasons, ElementsAre(AllOf(HasSubstr("torch 2.6's cu126 build uses the C++11 ABI"),
                                                      HasSubstr("its cu124 build has the old ABI"),
                                                      HasSubstr("compat.torch_build_for_abi: switch"))));
}

TEST(TorchAbi, SwitchBuildsTheFalseCellAgainstTheOldAbiBuild) {
  const Expansion e = expand_yaml(k26 + "compat: {torch_build_for_abi: switch}\n");
  EXPECT_TRUE(e.dropped.empty());
  ASSERT_EQ(e.cells.size(), 2u);
  EXPECT_EQ(e.cells[0].id(), "fa2.8.3-torch2.6-cu124-cp312-linux_x86_64-cxx11abiFALSE");
  EXPECT_EQ(e.cells[0].torch_cuda->str(), "12.4");
  EXPECT_EQ(e.cells[0].torch_abi, Abi::kFalse);
  EXPECT_EQ(e.cells[0].torch_index_tag(), "cu124");
  EXPECT_EQ(e.cells[1].torch_cuda->str(), "12.6");
  EXPECT_EQ(e.cells[1].torch_abi, Abi::kTrue);
}

TEST(TorchAbi, PypisTorch26IsCu124AndOldAbi) {
  MatrixSpec spec = test::spec_of("versions: [2.8.3]\ntorch: [\"2.6\"]\ncuda: [\"12.4\"]\npython: [cp312]\n");
  const Expansion e = expand(spec);
  ASSERT_EQ(e.cells.size(), 1u);
  EXPECT_EQ(e.cells[0].abi, Abi::kFalse);
  EXPECT_EQ(e.cells[0].torch_abi, Abi::kFalse);
}

TEST(TorchAbi, TheMatrixOverridesTheFactsByBuildOrPlatform) {
  const Expansion e = expand_yaml(
      "versions: [2.8.3]\ntorch: [\"2.5\"]\ncuda: [\"12.4\"]\npython: [cp312]\n"
      "compat: {torch_abi: {\"2.5\": {\"12.4\": TRUE}}}\n");
  ASSERT_EQ(e.cells.size(), 1u);
  EXPECT_EQ(e.cells[0].torch_abi, Abi::kTrue);
  EXPECT_EQ(e.cells[0].abi, Abi::kTrue);
  const auto bad = error_of(std::string(test::kBase) + "compat: {torch_abi: {\"2.6\": {gpu: TRUE}}}\n");
  EXPECT_THAT(bad.message, HasSubstr("'gpu' is neither a CUDA build nor a platform (compat.torch_abi.2.6)"));
  EXPECT_EQ(bad.code, 2);
  const auto value = error_of(std::string(test::kBase) + "compat: {torch_abi: {\"2.6\": {\"12.6\": maybe}}}\n");
  EXPECT_THAT(value.message, HasSubstr("'maybe' is not TRUE or FALSE"));
  const auto policy = error_of(std::string(test::kBase) + "compat: {torch_build_for_abi: yes}\n");
  EXPECT_THAT(policy.message, HasSubstr("'yes' is neither switch nor drop"));
}

}  // namespace
}  // namespace fabuild
