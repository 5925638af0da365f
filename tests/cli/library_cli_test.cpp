// Library cells through the real binary: --list and --dry-run (table and JSON), filters, --only,
// shards, --ci-matrix, and the configuration errors (exit 2).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../support/scratch_dir.h"
#include "run_binary.h"

namespace fabuild {
namespace {

using test::run_fabuild;
using ::testing::HasSubstr;

std::string write_matrix(const std::string& name, const std::string& text) {
  const auto path = test::process_file("libcli-" + name);
  std::ofstream(path) << text;
  return path.string();
}

// FlashAttention 2's wheels and library from one matrix (command cells for the wheels: nothing
// to provision; the library cells refuse a command, so they get none).
const char* kBoth =
    "package: flash-attn\n"
    "artifact: [wheel, library]\n"
    "versions: [\"2.8.3\"]\n"
    "torch: [\"2.8\"]\n"
    "cuda: [\"12.6\", \"12.8\"]\n"
    "python: [cp311, cp312]\n"
    "provision: host\n"
    "profile: [full, minimal]\n"
    "source: {sdist: flash_attn-2.8.3.tar.gz, sha256: "
    "1e71dd64a9e0280e0447b8a0c2541bad4bf6ac65bdeaa2f90e51a9e57de0370d}\n"
    "torch_index: https://torch-index.invalid/whl\n";

TEST(LibraryCli, ListJsonHasLibraryCellsWithoutTorchOrPython) {
  const std::string m = write_matrix("both.yaml", kBoth);
  const auto r = run_fabuild({m, "--list", "--format", "json", "--artifact", "library"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto cells = nlohmann::json::parse(r.out);
  ASSERT_EQ(cells.size(), 4u);
  const auto& c = cells[1];
  EXPECT_EQ(c["id"], "fa2.8.3-lib-cu126-linux_x86_64-minimal");
  EXPECT_EQ(c["artifact"], "library");
  EXPECT_EQ(c["library"].get<std::string>(),
            "wheelhouse/fa2.8.3/lib/cu126/minimal/flash_attn-2.8.3-lib-cu126-minimal-linux_x86_64.tar.gz");
  EXPECT_EQ(c["switches_off"],
            nlohmann::json::array({"BACKWARD", "SPLIT", "PAGEDKV", "HDIM32", "HDIM96", "HDIM192", "HDIM256"}));
  EXPECT_FALSE(c.contains("torch"));
  EXPECT_FALSE(c.contains("python"));
  // Without the filter, the wheels come first and say what they are.
  const auto all = nlohmann::json::parse(run_fabuild({m, "--list", "--format", "json"}).out);
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all[0]["artifact"], "wheel");
}

// A library from a source directory: its units counted from the source, as the recipe picks them.
TEST(LibraryCli, ListJsonCountsTheUnitsOfALibraryFromASourceDirectory) {
  const auto r = run_fabuild({"matrix/example-lib.yaml", "--list", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto cells = nlohmann::json::parse(r.out);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0]["units"], nlohmann::json::parse(R"({"total": 7, "kernels": 4, "available": 16})"));
  // From an sdist nothing is counted before it is fetched.
  const std::string m = write_matrix("both.yaml", kBoth);
  const auto sdist = nlohmann::json::parse(run_fabuild({m, "--list", "--format", "json", "--artifact", "library"}).out);
  EXPECT_FALSE(sdist[0].contains("units"));
}

TEST(LibraryCli, FiltersOnlyAndShardsPickLibraryCells) {
  const std::string m = write_matrix("both.yaml", kBoth);
  auto r = run_fabuild({m, "--list", "--only", "fa2.8.3-lib-cu128-*"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fa2.8.3-lib-cu128-linux_x86_64  "));
  EXPECT_THAT(r.out, HasSubstr("wheelhouse/fa2.8.3/lib/cu128/full"));
  EXPECT_THAT(r.out, HasSubstr("fa2.8.3-lib-cu128-linux_x86_64-minimal"));
  r = run_fabuild({m, "--list", "--python", "cp312", "--artifact", "library"});
  EXPECT_EQ(r.code, 3) << "a library has no Python: nothing is selected";
  std::set<std::string> seen;
  for (int k = 1; k <= 3; ++k) {
    const auto shard = run_fabuild({m, "--list", "--format", "json", "--shard", std::to_string(k) + "/3"});
    ASSERT_EQ(shard.code, 0) << shard.err;
    for (const auto& c : nlohmann::json::parse(shard.out)) EXPECT_TRUE(seen.insert(c["id"]).second) << c["id"];
  }
  EXPECT_EQ(seen.size(), 12u);
}

TEST(LibraryCli, TheCiMatrixHasAJobPerLibraryOrShardsThatRepeatTheFilter) {
  std::string m = write_matrix("both.yaml", kBoth);
  auto r = run_fabuild({m, "--artifact", "library", "--ci-matrix", "github"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> args;
  const auto jobs = nlohmann::json::parse(r.out);
  for (const auto& job : jobs["include"]) args.insert(job["args"].get<std::string>());
  EXPECT_EQ(args, (std::set<std::string>{
                      "--only fa2.8.3-lib-cu126-linux_x86_64", "--only fa2.8.3-lib-cu126-linux_x86_64-minimal",
                      "--only fa2.8.3-lib-cu128-linux_x86_64", "--only fa2.8.3-lib-cu128-linux_x86_64-minimal"}));
  // More cells than jobs: shards, each selecting its cells with the same filter.
  m = write_matrix("sharded.yaml", std::string(kBoth) + "ci: {max_entries: 2}\n");
  r = run_fabuild({m, "--artifact", "library", "--ci-matrix", "github"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::size_t cells = 0;
  const auto shards = nlohmann::json::parse(r.out);
  for (const auto& job : shards["include"]) {
    EXPECT_THAT(job["args"].get<std::string>(), HasSubstr("--artifact library --shard "));
    cells += job["cells"].get<std::size_t>();
  }
  EXPECT_EQ(cells, 4u);
}

TEST(LibraryCli, DryRunSaysWhatTheLibraryIsBuiltWith) {
  const std::string m = write_matrix("both.yaml", kBoth);
  const auto r = run_fabuild({m, "--dry-run", "-v", "--artifact", "library", "--cuda", "12.8"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fa2.8.3-lib-cu128-linux_x86_64-minimal"));
  EXPECT_THAT(r.out, HasSubstr("cmake + ninja, no torch"));
  EXPECT_THAT(r.out, HasSubstr("libraries:  wheelhouse/fa<version>/lib/cu<xyz>/<profile>/"));
  EXPECT_THAT(r.out, HasSubstr("  profile minimal: off BACKWARD, SPLIT, PAGEDKV, HDIM32, HDIM96, HDIM192, HDIM256"));
  EXPECT_THAT(r.out, HasSubstr("  library wheelhouse/fa2.8.3/lib/cu128/minimal/"));
}

TEST(LibraryCli, WhatCannotWorkExitsTwoAndSaysWhere) {
  const std::string m =
      write_matrix("container.yaml",
                   "package: flash-example\nartifact: library\nversions: [\"0.1.0\"]\ncuda: [\"13.0\"]\n"
                   "provision: container\nsource: {path: examples/flash_example}\n");
  const auto r = run_fabuild({m, "--list"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("container.yaml:5:12: library cells build on the host; provision: container is not "
                               "supported for them yet"));
  EXPECT_THAT(r.err, HasSubstr("hint: set provision: host"));
}

// `build: {type: ...}`: a library cell's CMAKE_BUILD_TYPE, in its id, directory and file name
// unless it is Release.
TEST(LibraryCli, ABuildTypeOtherThanReleaseNamesTheCellAndItsFiles) {
  const std::string base =
      "package: flash-attn-3\nartifact: library\nversions: [\"3.0.0\"]\ncuda: [\"13.0\"]\nprofile: [minimal]\n"
      "source: {git: https://git.invalid/fa.git, ref: main}\n";
  auto r = run_fabuild({write_matrix("debug.yaml", base + "build: {type: Debug}\n"), "--list", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto cells = nlohmann::json::parse(r.out);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0]["id"], "fa3.0.0-lib-cu130-linux_x86_64-minimal-debug");
  EXPECT_EQ(
      cells[0]["library"].get<std::string>(),
      "wheelhouse/fa3.0.0/lib/cu130/minimal-debug/flash_attn_3-3.0.0-lib-cu130-minimal-debug-linux_x86_64.tar.gz");
  // Any case; Release, written or not, adds nothing.
  r = run_fabuild({write_matrix("rwdi.yaml", base + "build: {type: relwithdebinfo}\n"), "--list"});
  EXPECT_THAT(r.out, HasSubstr("fa3.0.0-lib-cu130-linux_x86_64-minimal-relwithdebinfo"));
  r = run_fabuild({write_matrix("release.yaml", base + "build: {type: Release}\n"), "--list", "--format", "json"});
  cells = nlohmann::json::parse(r.out);
  EXPECT_EQ(cells[0]["id"], "fa3.0.0-lib-cu130-linux_x86_64-minimal");
  // An include gives one CUDA set's library its own build type.
  r = run_fabuild(
      {write_matrix("include.yaml", base + "include: [{artifact: library, build: {type: Debug}}]\n"), "--list"});
  EXPECT_THAT(r.out, HasSubstr("fa3.0.0-lib-cu130-linux_x86_64-minimal-debug"));
}

TEST(LibraryCli, AnUnknownBuildTypeExitsTwoNamingTheLineAndTheTypes) {
  const std::string m = write_matrix(
      "badtype.yaml",
      "package: flash-attn-3\nartifact: library\nversions: [\"3.0.0\"]\ncuda: [\"13.0\"]\nbuild: {type: Fast}\n");
  const auto r = run_fabuild({m, "--list"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("badtype.yaml:5:15: build.type is 'Fast', which is no build type of library cells"));
  EXPECT_THAT(r.err, HasSubstr("write Release, RelWithDebInfo, Debug (CMAKE_BUILD_TYPE)"));
}

// A FlashAttention clone holds hopper/ and csrc/flash_attn: each package's library counts (and
// the recipe compiles) its own flavour's files from the same tree.
TEST(LibraryCli, OneTreeWithBothFlavoursServesEachPackagesLibrary) {
  const auto tree = test::process_file("libcli-both-tree");
  namespace fs = std::filesystem;
  fs::create_directories(tree / "hopper" / "instantiations");
  fs::create_directories(tree / "csrc" / "flash_attn" / "src");
  for (const char* f :
       {"flash_fwd_hdim64_bf16_sm90.cu", "flash_fwd_hdim64_bf16_paged_sm90.cu", "flash_bwd_hdim64_bf16_sm90.cu"}) {
    std::ofstream(tree / "hopper" / "instantiations" / f) << "\n";
  }
  for (const char* f : {"flash_fwd_hdim64_bf16_sm80.cu", "flash_fwd_hdim128_bf16_sm80.cu",
                        "flash_fwd_split_hdim64_bf16_sm80.cu", "flash_bwd_hdim64_bf16_sm80.cu"}) {
    std::ofstream(tree / "csrc" / "flash_attn" / "src" / f) << "\n";
  }
  const auto units = [&](const std::string& package) {
    const std::string m = write_matrix(package + ".yaml", "package: " + package +
                                                              "\nartifact: library\nversions: [\"3.0.0\"]\n"
                                                              "cuda: [\"13.0\"]\narchs: \"90\"\nsource: {path: " +
                                                              tree.string() + "}\n");
    const auto r = run_fabuild({m, "--list", "--format", "json"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)[0]["units"];
  };
  // full: every file of the flavour; FlashAttention 3 adds its scheduler, combine kernel and
  // backward backend to the C API and the backend, FlashAttention 2 its backward backend,
  // gradient sum and LSE fix-up.
  EXPECT_EQ(units("flash-attn-3"), nlohmann::json::parse(R"({"total": 8, "kernels": 3, "available": 3})"));
  EXPECT_EQ(units("flash-attn"), nlohmann::json::parse(R"({"total": 9, "kernels": 4, "available": 4})"));
  fs::remove_all(tree);
}

}  // namespace
}  // namespace fabuild
