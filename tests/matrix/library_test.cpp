// Library cells (`artifact: library`, docs/library.md): version x CUDA x platform x profile, no
// torch or Python; the matrix keys, ids, matching, profiles and what cannot work.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "matrix/select.h"
#include "support.h"

namespace fabuild {
namespace {

using test::error_of;
using test::expand_yaml;
using test::ids;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// FlashAttention 3's library alone: no torch, no python.
const char* kFa3 =
    "package: flash-attn-3\n"             // 1
    "artifact: library\n"                 // 2
    "versions: [\"3.0.0\"]\n"             // 3
    "cuda: [\"12.8\", \"13.0\"]\n"        // 4
    "profile: [minimal, full]\n"          // 5
    "source: {path: flash-attention}\n";  // 6

// FlashAttention 2's wheels and library from one matrix.
const std::string kBoth = std::string(test::kBase) +
                          "artifact: [wheel, library]\n"                 // 6
                          "source: {sdist: flash_attn-2.8.3.tar.gz}\n";  // 7

TEST(Library, CellsAreVersionByCudaByPlatformByProfileWithoutTorchOrPython) {
  const Expansion e = expand_yaml(kFa3);
  EXPECT_THAT(ids(e.cells), ElementsAre("fa3.0.0-lib-cu128-linux_x86_64-minimal", "fa3.0.0-lib-cu128-linux_x86_64",
                                        "fa3.0.0-lib-cu130-linux_x86_64-minimal", "fa3.0.0-lib-cu130-linux_x86_64"));
  EXPECT_THAT(e.dropped, IsEmpty());
  EXPECT_THAT(e.warnings, IsEmpty());
  const Cell& c = e.cells.front();
  EXPECT_TRUE(c.library());
  EXPECT_FALSE(c.abi3());                    // flash-attn-3's wheels are abi3; its library has no Python at all
  EXPECT_EQ(c.provision, Provision::kHost);  // the default container is for wheels
  EXPECT_EQ(c.value(Axis::kTorch), "");
  EXPECT_EQ(c.value(Axis::kPython), "");
  EXPECT_EQ(c.value(Axis::kArtifact), "library");
  EXPECT_EQ(c.gpu_tag(), "cu128");
  // The library's minimal is FlashAttention 3's own: head dims 64 and 128, no sm_80.
  EXPECT_THAT(c.disabled(), ::testing::Contains("HDIM256"));
  EXPECT_THAT(c.archs(), ElementsAre(90));
}

TEST(Library, AnArtifactAxisGivesWheelsAndOneLibraryPerCudaSet) {
  const Expansion e = expand_yaml(kBoth);
  ASSERT_EQ(e.cells.size(), 10u);
  EXPECT_EQ(e.cells[7].id(), "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64");
  EXPECT_EQ(e.cells[8].id(), "fa2.8.3-lib-cu126-linux_x86_64");
  EXPECT_EQ(e.cells[9].id(), "fa2.8.3-lib-cu128-linux_x86_64");
}

TEST(Library, TorchAndPythonOfALibraryOnlyMatrixAreWarnedAbout) {
  const Expansion e = expand_yaml(std::string(kFa3) + "python: [cp312]\n");
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_THAT(e.warnings[0], HasSubstr("m.yaml:7:1: python is for wheel cells; this matrix builds libraries only"));
}

TEST(Library, ValuesOfTorchPythonAndAbiNeverMatchALibrary) {
  // An exclude on Python leaves the libraries; one on the artifact and CUDA set drops one.
  Expansion e = expand_yaml(kBoth + "exclude: [{python: cp311}, {artifact: library, cuda: \"12.6\"}]\n");
  EXPECT_EQ(e.cells.size(), 5u);
  EXPECT_EQ(e.cells.back().id(), "fa2.8.3-lib-cu128-linux_x86_64");
  // An include on the CUDA set extends the library too; one on torch does not.
  e = expand_yaml(kBoth + "include: [{cuda: \"12.8\", archs: \"80\"}, {torch: \"2.8\", env: {X: \"1\"}}]\n");
  const Cell& lib = e.cells.back();
  EXPECT_THAT(lib.archs(), ElementsAre(80));
  EXPECT_EQ(lib.env().count("X"), 0u);
}

TEST(Library, FiltersPickByArtifactAndTorchOrPythonPicksWheels) {
  const Expansion all = expand_yaml(kBoth);
  Filters f;
  f[Axis::kArtifact] = {"library"};
  EXPECT_THAT(ids(select_cells(all, f).cells),
              ElementsAre("fa2.8.3-lib-cu126-linux_x86_64", "fa2.8.3-lib-cu128-linux_x86_64"));
  f = {};
  f[Axis::kPython] = {"cp312"};
  for (const Cell& c : select_cells(all, f).cells) EXPECT_FALSE(c.library()) << c.id();
  f = {};
  f.only = {"*-lib-*"};
  EXPECT_EQ(select_cells(all, f).cells.size(), 2u);
  f = {};
  f[Axis::kArtifact] = {"libary"};
  try {
    select_cells(all, f);
    ADD_FAILURE() << "no error for --artifact libary";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--artifact libary: not a artifact value (did you mean 'library'?)"));
  }
}

TEST(Library, ShardsHoldEveryLibraryCellOnce) {
  const Expansion all = expand_yaml(kBoth);
  std::vector<std::string> seen;
  for (int k = 1; k <= 3; ++k) {
    for (const Cell& c : shard_cells(all.cells, Shard{k, 3})) seen.push_back(c.id());
  }
  std::sort(seen.begin(), seen.end());
  std::vector<std::string> want = ids(all.cells);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(seen, want);
}

TEST(Library, ProfilesAndSwitchesAreTheLibrarysOwn) {
  // FlashAttention 2's setup.py has no head-dim switches; its library recipe does. The library's
  // minimal is forward only: no backward, split or paged files.
  Expansion e = expand_yaml(kBoth + "profile: [minimal]\n");
  EXPECT_THAT(e.cells.back().disabled(),
              ElementsAre("BACKWARD", "SPLIT", "PAGEDKV", "HDIM32", "HDIM96", "HDIM192", "HDIM256"));
  EXPECT_THAT(e.cells.front().disabled(), ElementsAre("BACKWARD", "DROPOUT", "ALIBI", "SOFTCAP", "LOCAL"));
  const auto err = error_of(kBoth + "profile: [small]\nprofiles: {small: {disable: [HDIM96]}}\n");
  EXPECT_THAT(err.message, HasSubstr("profile 'small' turns off HDIM96, which flash-attn does not have"));
  EXPECT_THAT(err.hint, HasSubstr("(HDIM96 is a switch of its library only)"));
  std::string library_only = kBoth;
  library_only.replace(library_only.find("artifact: [wheel, library]"), 26, "artifact: library");
  e = expand_yaml(library_only + "profile: [small]\nprofiles: {small: {disable: [HDIM96, FP16]}}\n");
  EXPECT_THAT(e.cells.back().disabled(), ElementsAre("HDIM96", "FP16"));
}

TEST(Library, RocmAndWindowsLibrariesAreDroppedWithTheReason) {
  const Expansion e = expand_yaml(std::string(kFa3) + "rocm: [\"6.2\"]\nplatform: [linux_x86_64, win_amd64]\n");
  std::vector<std::string> reasons;
  for (const auto& d : e.dropped) reasons.push_back(d.cell.id() + ": " + d.reasons.front());
  EXPECT_THAT(reasons, ::testing::Contains(HasSubstr("fa3.0.0-lib-rocm62-linux_x86_64-minimal: the library recipe "
                                                     "builds CUDA kernels with nvcc")));
  EXPECT_THAT(reasons, ::testing::Contains(HasSubstr("-win_amd64-minimal: library cells are built on Linux so far")));
}

TEST(Library, ACudaSetNamingTorchsBuildIsTheSameLibrary) {
  const Expansion e = expand_yaml(
      "package: flash-attn-3\nartifact: library\nversions: [\"3.0.0\"]\nsource: {path: x}\n"
      "cuda: [\"12.9\", {toolkit: \"12.9\", torch_cuda: \"12.8\"}]\n");
  EXPECT_THAT(ids(e.cells), ElementsAre("fa3.0.0-lib-cu129-linux_x86_64"));
  ASSERT_EQ(e.dropped.size(), 1u);
  EXPECT_THAT(e.dropped[0].reasons[0], HasSubstr("builds the same library as fa3.0.0-lib-cu129-linux_x86_64"));
}

TEST(Library, WhatCannotWorkIsAnErrorSaidWhereItIsAsked) {
  auto err = error_of(std::string(kFa3) + "provision: container\n");
  EXPECT_EQ(err.message,
            "m.yaml:7:12: library cells build on the host; provision: container is not supported for them yet");
  EXPECT_THAT(err.hint, HasSubstr("include: [{artifact: library, provision: host}]"));
  EXPECT_EQ(err.code, 2);
  // ...and that include is the way out.
  EXPECT_EQ(expand_yaml(std::string(kFa3) + "provision: container\ninclude: [{artifact: library, provision: host}]\n")
                .cells.size(),
            4u);
  err = error_of(std::string(kFa3) + "include: [{cuda: \"13.0\", provision: container}]\n");
  EXPECT_THAT(err.message, HasSubstr("m.yaml:7:11: library cells build on the host"));
  err = error_of(std::string(kFa3) + "command: [make]\n");
  EXPECT_THAT(err.message, HasSubstr("m.yaml:7:10: command: replaces the wheel build"));
  err = error_of("package: flash-attn\nartifact: library\nversions: [\"2.8.3\"]\ncuda: [\"12.8\"]\n");
  EXPECT_THAT(err.message, HasSubstr("m.yaml:2:11: library cells need the package's source tree, and `source: pip`"));
  EXPECT_THAT(err.hint, HasSubstr("source: {sdist: FILE or URL, sha256: HEX}"));
  const std::string rest = "versions: [\"1.0\"]\ncuda: [\"13.0\"]\nsource: {path: x}\n";
  err = error_of("package: flash-attn-3\nartifact: [wheel, libary]\n" + rest);
  EXPECT_THAT(err.message,
              HasSubstr("m.yaml:2:19: artifact must be wheel or library, not 'libary' (did you mean 'library'?)"));
  err = error_of("package: {name: my-kernels, extension: my_kernels._C}\nartifact: library\n" + rest);
  EXPECT_THAT(err.message, HasSubstr("m.yaml:2:11: my-kernels has no library recipe"));
  err = error_of(std::string(kFa3) + "include: [{artifact: library, cuda: \"12.9\", python: cp312}]\n");
  EXPECT_THAT(err.message, HasSubstr("this include adds a library cell, which has no python"));
}

}  // namespace
}  // namespace fabuild
