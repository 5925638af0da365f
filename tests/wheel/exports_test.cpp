// The export check on real shared libraries, compiled by the machine's g++ for the test.

#include "wheel/exports.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A library like FlashAttention's: entry points in a namespace, one overloaded, a C one, a
// hidden one and a static one.
const char* kLibrary = R"(#include <vector>
namespace flash {
std::vector<int> mha_fwd(const std::vector<int>& q, bool causal) { return causal ? q : std::vector<int>{}; }
std::vector<int> mha_fwd(const std::vector<int>& q, int splits) { return splits ? q : std::vector<int>{}; }
__attribute__((visibility("hidden"))) int mha_bwd(int x) { return x + 1; }
static int helper(int x) { return x * 2; }
int use_helper(int x) { return helper(x); }
}
extern "C" int flash_c_entry(int x) { return x; }
)";

std::filesystem::path build_library(const test::ScratchDir& dir) {
  std::ofstream(dir.path() / "lib.cpp") << kLibrary;
  const std::filesystem::path so = dir.path() / "libfake_attn.so";
  const std::string cmd = "c++ -shared -fPIC -O1 -o '" + so.string() + "' '" + (dir.path() / "lib.cpp").string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return so;
}

TEST(Exports, EntryPointsAreFoundByNameOrQualifiedNameWithTheirSignatures) {
  test::ScratchDir dir("exports");
  const auto so = build_library(dir);
  const ExportCheck check = check_exports(so, {"mha_fwd", "flash::use_helper", "flash_c_entry"}).value();
  EXPECT_TRUE(check.missing.empty());
  EXPECT_THAT(check.found.at("mha_fwd"), HasSubstr("flash::mha_fwd(std::vector<int, std::allocator<int> > const&,"));
  EXPECT_EQ(check.found.at("flash::use_helper"), "flash::use_helper(int)");
  EXPECT_EQ(check.found.at("flash_c_entry"), "flash_c_entry");
}

TEST(Exports, HiddenStaticAndAbsentFunctionsAreMissing) {
  test::ScratchDir dir("exports");
  const auto so = build_library(dir);
  const ExportCheck check = check_exports(so, {"mha_bwd", "helper", "mha_varlen_fwd", "other::mha_fwd"}).value();
  EXPECT_THAT(check.missing, ElementsAre("mha_bwd", "helper", "mha_varlen_fwd", "other::mha_fwd"));
  EXPECT_TRUE(check.found.empty());
}

TEST(Exports, EveryExportedFunctionIsListedOnceByQualifiedName) {
  test::ScratchDir dir("exports");
  const auto so = build_library(dir);
  // Not the hidden mha_bwd nor the static helper; the overloaded mha_fwd once.
  EXPECT_THAT(exported_functions(so).value(), ElementsAre("flash::mha_fwd", "flash::use_helper", "flash_c_entry"));
}

TEST(Exports, ANonElfFileIsAnError) {
  test::ScratchDir dir("exports");
  std::ofstream(dir.path() / "x.so") << "not an ELF file";
  const auto not_elf = check_exports(dir.path() / "x.so", {"mha_fwd"});
  ASSERT_FALSE(not_elf);
  EXPECT_THAT(not_elf.error().what, HasSubstr("is not an ELF file"));
  const auto absent = check_exports(dir.path() / "absent.so", {"mha_fwd"});
  ASSERT_FALSE(absent);
  EXPECT_THAT(absent.error().what, HasSubstr("absent.so"));
}

}  // namespace
}  // namespace fabuild
