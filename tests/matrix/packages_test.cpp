// Package presets, kernel profiles, abi3 collapse, ROCm sets and patches in the matrix
// (docs/packages.md).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "matrix/select.h"
#include "support.h"

namespace fabuild {
namespace {

using test::error_of;
using test::expand_yaml;
using test::ids;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

const Cell& cell(const Expansion& e, const std::string& id) {
  const auto it = std::find_if(e.cells.begin(), e.cells.end(), [&](const Cell& c) { return c.id() == id; });
  if (it == e.cells.end()) throw std::runtime_error("no cell " + id);
  return *it;
}

// The done-when matrix of the issue: FlashAttention 2 on CUDA and ROCm, plus a FlashAttention
// 3 cell with the minimal profile, all in one file.
const char* kMixed =
    "package: flash-attn\n"
    "versions: [\"2.8.3\"]\n"
    "torch: [\"2.8\"]\n"
    "cuda: [\"12.8\"]\n"
    "rocm: [\"6.3\"]\n"
    "python: [cp311, cp312]\n"
    "archs: \"90\"\n"
    "include:\n"
    "  - {package: flash-attn-3, version: \"3.0.0b1\", cuda: \"12.8\", profile: minimal,\n"
    "     source: {git: \"https://example.invalid/flash-attention.git\", ref: v2.8.3}}\n";

TEST(Packages, AMatrixMixingFa2Fa3MinimalAndRocmHasDistinctIds) {
  const Expansion e = expand_yaml(kMixed);
  EXPECT_THAT(
      ids(e.cells),
      UnorderedElementsAre("fa2.8.3-torch2.8-cu128-cp311-linux_x86_64", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64",
                           "fa2.8.3-torch2.8-rocm63-cp311-linux_x86_64", "fa2.8.3-torch2.8-rocm63-cp312-linux_x86_64",
                           "fa3.0.0b1-torch2.8-cu128-abi3-linux_x86_64-minimal"));
  EXPECT_TRUE(e.dropped.empty());
  const Cell& rocm = cell(e, "fa2.8.3-torch2.8-rocm63-cp312-linux_x86_64");
  EXPECT_TRUE(rocm.rocm());
  EXPECT_EQ(rocm.torch_index_tag(), "rocm6.3");
  EXPECT_THAT(rocm.rocm_archs(), ElementsAre("gfx90a", "gfx942"));  // flash-attn's default
  const Cell& fa3 = cell(e, "fa3.0.0b1-torch2.8-cu128-abi3-linux_x86_64-minimal");
  EXPECT_EQ(fa3.package->name, "flash-attn-3");
  EXPECT_EQ(fa3.python.str(), "cp311");  // the lowest of the matrix's Pythons builds the abi3 wheel
  // FlashAttention 3's own minimal build: four kernel units, sm_90a only.
  EXPECT_THAT(fa3.disabled(), ElementsAre("BACKWARD", "SPLIT", "PAGEDKV", "APPENDKV", "SOFTCAP", "PACKGQA", "FP8",
                                          "HDIM96", "HDIM192", "HDIM256", "SM80", "HDIMDIFF64", "HDIMDIFF192"));
  EXPECT_EQ(to_string(fa3.archs()), "90");
  ASSERT_TRUE(fa3.source().has_value());
  EXPECT_EQ(fa3.source()->ref, "v2.8.3");
}

TEST(Packages, AnAbi3PackageCollapsesThePythonAxisAndSaysSo) {
  const Expansion e = expand_yaml(
      "package: flash-attn-3\nversions: [\"3.0.0b1\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\", \"12.9\"]\n"
      "python: [cp312, cp310, cp311]\nsource: {path: fa}\n");
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa3.0.0b1-torch2.8-cu128-abi3-linux_x86_64", "fa3.0.0b1-torch2.8-cu129-abi3-linux_x86_64"));
  EXPECT_EQ(e.cells[0].python.str(), "cp310");
  ASSERT_EQ(e.notes.size(), 2u);
  EXPECT_THAT(e.notes[0], HasSubstr("one cp310-abi3 wheel serves python cp312, cp310, cp311 (built with cp310)"));
  // A filter on any of the Pythons it serves picks it.
  Filters f;
  f[Axis::kPython] = {"cp312"};
  EXPECT_EQ(select_cells(e, f).cells.size(), 2u);
}

// Below the floor there is no abi3 wheel: cp39 is dropped saying why, not merged into the wheel
// that would claim to serve it, and a filter on it picks nothing to build.
TEST(Packages, APythonBelowTheAbi3FloorIsDroppedNotServed) {
  const Expansion e = expand_yaml(
      "package: flash-attn-3\nversions: [\"3.0.0\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\n"
      "python: [cp39, cp310, cp311]\nsource: {path: fa}\n");
  ASSERT_EQ(e.cells.size(), 1u);
  EXPECT_EQ(e.cells[0].python.str(), "cp310");
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_THAT(e.notes[0], HasSubstr("one cp310-abi3 wheel serves python cp310, cp311 (built with cp310)"));
  ASSERT_EQ(e.dropped.size(), 1u);
  EXPECT_THAT(e.dropped[0].reasons,
              ElementsAre("python cp39: flash-attn-3 builds a cp310-abi3 wheel, which needs Python >= 3.10"));
  Filters f;
  f[Axis::kPython] = {"cp39"};
  EXPECT_TRUE(select_cells(e, f).cells.empty());
}

TEST(Packages, ProfilesAreAnAxisWithTheirOwnIds) {
  const Expansion e = expand_yaml(
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n"
      "profile: [full, minimal, fwd]\nprofiles: {fwd: {disable: [backward]}}\n");
  EXPECT_THAT(ids(e.cells), ElementsAre("fa2.8.3-torch2.8-cu128-cp312-linux_x86_64",
                                        "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64-minimal",
                                        "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64-fwd"));
  EXPECT_TRUE(e.cells[0].disabled().empty());
  EXPECT_THAT(e.cells[1].disabled(), ElementsAre("BACKWARD", "DROPOUT", "ALIBI", "SOFTCAP", "LOCAL"));
  EXPECT_THAT(e.cells[2].disabled(), ElementsAre("BACKWARD"));  // upper-cased as the package spells it
}

TEST(Packages, AnUnknownProfileOrSwitchIsAnErrorWithTheKnownOnes) {
  const std::string base =
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n";
  const auto unknown = error_of(base + "profile: minimall\n");
  EXPECT_THAT(unknown.message, HasSubstr("unknown profile 'minimall' for flash-attn (did you mean 'minimal'?)"));
  EXPECT_THAT(unknown.hint, HasSubstr("profiles: full, minimal"));
  EXPECT_EQ(unknown.code, 2);
  const auto sw = error_of(base + "profile: nobwd\nprofiles: {nobwd: {disable: [BACKWRD]}}\n");
  EXPECT_THAT(sw.message, HasSubstr("profile 'nobwd' turns off BACKWRD, which flash-attn does not have"));
  EXPECT_THAT(sw.message, HasSubstr("did you mean 'BACKWARD'?"));
  const auto name = error_of(base + "profile: Min-1\n");
  EXPECT_THAT(name.message, HasSubstr("'Min-1' is not a profile name"));
}

TEST(Packages, RocmSetsFollowTorchsRocmBuilds) {
  const Expansion e = expand_yaml(
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.6\", \"2.9\"]\nrocm: [\"6.2\", \"6.4\"]\npython: "
      "[cp312]\n");
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.6-rocm62-cp312-linux_x86_64", "fa2.8.3-torch2.9-rocm64-cp312-linux_x86_64"));
  EXPECT_EQ(e.cells[0].torch_index_tag(), "rocm6.2.4");  // torch 2.6 publishes rocm6.2.4
  ASSERT_EQ(e.dropped.size(), 2u);
  EXPECT_THAT(e.dropped[0].reasons, ElementsAre("torch 2.6 has no ROCm 6.4 build (builds: rocm6.1, rocm6.2.4)"));
  EXPECT_THAT(e.dropped[1].reasons, ElementsAre("torch 2.9 has no ROCm 6.2 build (builds: rocm6.4)"));
}

TEST(Packages, CudaFiltersAndExcludesNeverTouchRocmCells) {
  const Expansion e = expand_yaml(
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\nrocm: [\"6.3\"]\npython: "
      "[cp312]\n"
      "exclude: [{rocm: \"6.*\", python: cp312}]\n");
  EXPECT_THAT(ids(e.cells), ElementsAre("fa2.8.3-torch2.8-cu128-cp312-linux_x86_64"));
  const Expansion both = expand_yaml(
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\nrocm: [\"6.3\"]\npython: "
      "[cp312]\n");
  Filters f;
  f.rocm = {"6.3"};
  EXPECT_THAT(ids(select_cells(both, f).cells), ElementsAre("fa2.8.3-torch2.8-rocm63-cp312-linux_x86_64"));
  f.rocm.clear();
  f[Axis::kGpu] = {"12.8"};
  EXPECT_THAT(ids(select_cells(both, f).cells), ElementsAre("fa2.8.3-torch2.8-cu128-cp312-linux_x86_64"));
}

TEST(Packages, ACudaOnlyPackageHasNoRocmCells) {
  const Expansion e = expand_yaml(
      "package: flash-attn-3\nversions: [\"3.0.0b1\"]\ntorch: [\"2.8\"]\nrocm: [\"6.3\"]\npython: [cp312]\n"
      "source: {path: fa}\n");
  ASSERT_EQ(e.dropped.size(), 1u);
  EXPECT_THAT(e.dropped[0].reasons, ElementsAre("flash-attn-3 does not build for ROCm"));
}

TEST(Packages, Fa3NeedsASourceThatHoldsHopper) {
  const std::string base =
      "package: flash-attn-3\nversions: [\"3.0.0b1\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n";
  EXPECT_THAT(error_of(base).message, HasSubstr("flash-attn-3 has no sdist on PyPI to fetch: name its source"));
  EXPECT_THAT(error_of(base + "source: {git: https://example.invalid/fa.git}\n").message,
              HasSubstr("source.git for flash-attn-3 needs ref"));
  const auto include =
      error_of(std::string(test::kBase) + "include: [{package: flash-attn-3, version: \"3.0.0b1\"}]\n");
  EXPECT_THAT(include.message, HasSubstr("this include adds flash-attn-3 cells, which need their own source:"));
}

TEST(Packages, AMatrixDescribesItsOwnPackage) {
  const Expansion e = expand_yaml(
      "package: {name: my-kernels, extension: my_kernels._C, env_prefix: MYK, label: \"{gpu}pt{torch}\",\n"
      "          switches: [NO_BWD], profiles: {fwd: [NO_BWD]}, exports: [my_fwd]}\n"
      "versions: [\"1.2.0\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\nprofile: [full, fwd]\nsource: "
      "{path: k}\n");
  ASSERT_EQ(e.cells.size(), 2u);
  const Cell& c = e.cells[1];
  EXPECT_EQ(c.id(), "my_kernels1.2.0-torch2.8-cu128-cp312-linux_x86_64-fwd");
  EXPECT_EQ(c.package->dist_name, "my_kernels");
  EXPECT_EQ(c.package->archs_env, "MYK_CUDA_ARCHS");
  EXPECT_EQ(c.package->local_version_env, "MYK_LOCAL_VERSION");
  EXPECT_THAT(c.disabled(), ElementsAre("NO_BWD"));
  EXPECT_THAT(c.package->exports, ElementsAre("my_fwd"));
}

TEST(Packages, AMatrixPackageIsChecked) {
  const std::string axes =
      "versions: [\"1.0\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\nsource: {path: k}\n";
  EXPECT_THAT(error_of("package: {extension: x}\n" + axes).message, HasSubstr("package needs a name"));
  EXPECT_THAT(error_of("package: {name: k}\n" + axes).message, HasSubstr("package needs extension"));
  EXPECT_THAT(error_of("package: {name: k, extension: \"a b\"}\n" + axes).message,
              HasSubstr("'a b' is not a module name"));
  EXPECT_THAT(error_of("package: {name: k, extension: k, label: \"cu-{torch}\"}\n" + axes).message,
              HasSubstr("'cu-{torch}' is not a local version label"));
  EXPECT_THAT(error_of("package: torch-extension\n" + axes).message, HasSubstr("unknown package 'torch-extension'"));
}

TEST(Packages, PatchRulesPickTheirVersions) {
  const Expansion e = expand_yaml(
      "package: flash-attn\nversions: [\"2.8.3\", \"2.7.4\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n"
      "patches: {\"2.8.3\": [a.patch, b.patch], \"2.*\": [all.patch]}\n");
  ASSERT_EQ(e.cells.size(), 2u);
  EXPECT_THAT(e.cells[0].patches, ElementsAre("a.patch", "b.patch", "all.patch"));
  EXPECT_THAT(e.cells[1].patches, ElementsAre("all.patch"));
  EXPECT_THAT(error_of(std::string(test::kBase) + "patches: {x.y: [a.patch]}\n").message,
              HasSubstr("'x.y' is neither a version nor a pattern"));
}

TEST(Packages, RocmArchsAreCheckedAgainstThePackage) {
  const std::string base =
      "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\nrocm: [\"6.3\"]\npython: [cp312]\n";
  const Expansion e = expand_yaml(base + "rocm_archs: \"gfx942;gfx950\"\n");
  EXPECT_THAT(e.cells.at(0).rocm_archs(), ElementsAre("gfx942", "gfx950"));
  EXPECT_THAT(error_of(base + "rocm_archs: gfx1100\n").message, HasSubstr("flash-attn does not build for gfx1100"));
  EXPECT_THAT(error_of(base + "rocm_archs: sm_90\n").message, HasSubstr("'sm_90' is not an AMD GPU arch"));
}

}  // namespace
}  // namespace fabuild
