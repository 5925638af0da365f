#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <tuple>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "../support/scratch_dir.h"
#include "run_binary.h"

namespace fabuild {
namespace {

using test::run_fabuild;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

// A machine of 16 cores and 128 GB, with torch from an index that has all of torch's CUDA
// builds (pip's own has one per series: those cells are dropped without it).
const std::vector<std::string> kBudget = {
    "--cores", "16", "--memory-gb", "128", "--torch-index", "https://torch-index.invalid/whl"};

std::vector<std::string> with_budget(std::vector<std::string> args) {
  args.insert(args.end(), kBudget.begin(), kBudget.end());
  return args;
}

std::filesystem::path write_matrix(const std::string& name, const std::string& text) {
  const auto path = test::process_file("cli-" + name);
  std::ofstream(path) << text;
  return path;
}

TEST(Cli, HelpDocumentsEveryFlagAndExitCode) {
  const auto r = run_fabuild({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--dry-run", "--list", "--format", "--fa", "--torch", "--cuda", "--python", "--platform",
                           "--only", "--shard", "--allow-empty", "--output-dir", "--cores", "--memory-gb", "--jobs"}) {
    EXPECT_THAT(r.out, HasSubstr(flag)) << flag;
  }
  EXPECT_THAT(r.out, HasSubstr("2 bad configuration or flags, 3 no cell selected"));
}

TEST(Cli, DryRunOfTheExamplePrintsThePlan) {
  const auto r = run_fabuild(with_budget({"matrix/flash-attn.yaml", "--dry-run"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("matrix/flash-attn.yaml: flash-attn, 13 cells to build"));
  EXPECT_THAT(r.out, HasSubstr("budget: 16 cores, 108.8 GB for builds (128.0 GB available - 19.2 GB reserve)"));
  EXPECT_THAT(r.out, HasSubstr("CELL "));
  EXPECT_THAT(r.out, HasSubstr("fa2.8.3-torch2.8-cu128-cp312-linux_x86_64   80;90;100;120"));
  EXPECT_THAT(r.out, HasSubstr("every cell: FLASH_ATTENTION_FORCE_BUILD=TRUE BUILD_TARGET=cuda"));
  // The toolchain files it read: the toolchains/ beside the matrix's directory, not the cwd's.
  EXPECT_THAT(r.out, HasSubstr("/toolchains (containers.yaml)\n"));
  EXPECT_EQ(r.err, "");
}

TEST(Cli, DryRunVerboseShowsEveryCellInFull) {
  const auto r = run_fabuild(
      with_budget({"matrix/flash-attn.yaml", "--dry-run", "-v", "--only", "fa2.8.3-torch2.8-cu128-cp312-*"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  wheel   wheelhouse/fa2.8.3/torch2.8/cu128/"
                               "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"));
  EXPECT_THAT(r.out, HasSubstr("FLASH_ATTN_LOCAL_VERSION=cu128torch2.8cxx11abiTRUE"));
  EXPECT_THAT(r.out, HasSubstr("  timeout 10800s"));
  EXPECT_THAT(r.out, HasSubstr("  row     fa2.8.3-torch2.8-cu128-*-linux_x86_64|80;90;100;120\n"));
}

// torch_index changes which torch build pip installs: the plan says which, and where from.
TEST(Cli, ThePlanShowsEachCellsTorchWheelAndWhereItComesFrom) {
  const auto index = run_fabuild(
      with_budget({"matrix/flash-attn.yaml", "--dry-run", "-v", "--only", "fa2.8.3-torch2.8-cu128-cp312-*"}));
  ASSERT_EQ(index.code, 0) << index.err;
  EXPECT_THAT(index.out, HasSubstr("torch==2.8.* cu128 (torch ABI TRUE) from https://torch-index.invalid/whl/cu128"));
  const auto pip = run_fabuild({"matrix/flash-attn.yaml", "--dry-run", "--only", "fa2.8.3-torch2.8-cu128-cp312-*",
                                "--cores", "16", "--memory-gb", "128"});
  ASSERT_EQ(pip.code, 0) << pip.err;
  EXPECT_THAT(pip.out, HasSubstr("torch==2.8.* cu128 (torch ABI TRUE) from pip's index"));
  const auto json = run_fabuild(with_budget(
      {"matrix/flash-attn.yaml", "--list", "--format", "json", "--only", "fa2.8.3-torch2.8-cu128-cp312-*"}));
  EXPECT_THAT(json.out, HasSubstr("\"torch_from\": \"https://torch-index.invalid/whl/cu128\""));
}

// FlashAttention's own publish matrix, as maintainers move it: the same 56 wheel names as
// upstream's releases (tests/wheel/layout_test.cpp holds them byte for byte), from a 12.9.1
// toolkit, both ABIs of torch 2.6.
TEST(Cli, TheUpstreamShapedMatrixPlansUpstreamsNames) {
  const auto r = run_fabuild(with_budget({"matrix/publish-shaped.yaml", "--list", "--format", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("flash_attn-2.8.3+cu12torch2.6cxx11abiTRUE-cp310-cp310-linux_x86_64.whl"));
  EXPECT_THAT(r.out, HasSubstr("flash_attn-2.8.3+cu12torch2.6cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"));
  EXPECT_THAT(r.out, HasSubstr("flash_attn-2.8.3+cu13torch2.10cxx11abiTRUE-cp313-cp313-linux_aarch64.whl"));
  EXPECT_THAT(r.out, HasSubstr("\"cuda\": \"12.9.1\""));
}

// cuda 12.6/12.8/12.9 with torch 2.7 (builds cu118, cu126, cu128): 12.9 collapses into 12.8.
TEST(Cli, CellsThatCollapsePlanWithANoteAndStrictRefusesThem) {
  const auto path = write_matrix("collapse.yaml",
                                 "versions: [2.8.3]\ntorch: [\"2.7\", \"2.8\"]\ncuda: [\"12.6\", \"12.8\", \"12.9\"]\n"
                                 "python: [cp312]\n");
  const auto r = run_fabuild(with_budget({path.string(), "--dry-run"}));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("5 cells to build, 1 dropped"));
  EXPECT_THAT(
      r.out,
      HasSubstr("cuda 12.9 builds the same wheel as fa2.8.3-torch2.7-cu128-cp312-linux_x86_64 (cuda 12.8), which is "
                "kept"));
  const auto strict = run_fabuild(with_budget({path.string(), "--dry-run", "--strict"}));
  EXPECT_EQ(strict.code, 2);
  EXPECT_THAT(strict.err, HasSubstr("cuda 12.9 for torch 2.7 builds the same wheel as"));
  std::filesystem::remove(path);
}

// Upstream's label says cu12 for 12.8 and 12.9 alike: two cells, one flat release name.
TEST(Cli, TwoCellsOfOneFlatReleaseNameAreWarnedAbout) {
  const auto path = write_matrix("flat.yaml",
                                 "naming: upstream\nversions: [2.8.3]\ntorch: [\"2.8\"]\n"
                                 "cuda: [\"12.8\", \"12.9\"]\npython: [cp312]\n");
  const auto r = run_fabuild(with_budget({path.string(), "--dry-run"}));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("fa2.8.3-torch2.8-cu128-cp312-linux_x86_64 and fa2.8.3-torch2.8-cu129-cp312-linux_x86_64 both "
                        "name their wheel flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"));
  std::filesystem::remove(path);
}

TEST(Cli, ListJsonIsOneObjectPerCell) {
  const auto json = run_fabuild(with_budget({"matrix/flash-attn.yaml", "--list", "--format", "json"}));
  ASSERT_EQ(json.code, 0) << json.err;
  const auto cells = nlohmann::json::parse(json.out);
  ASSERT_TRUE(cells.is_array());
  ASSERT_EQ(cells.size(), 13u);
  std::set<std::string> ids;
  std::map<std::string, std::set<std::string>> rows;      // row -> its Python tags
  std::map<std::string, std::set<std::string>> row_keys;  // row -> its cells' row keys
  for (const auto& c : cells) {
    ASSERT_TRUE(c.is_object());
    ids.insert(c.at("id").get<std::string>());
    EXPECT_EQ(c.at("wheelhouse_dir").get<std::string>(), "wheelhouse/fa2.8.3/torch" +
                                                             c.at("torch_series").get<std::string>() + "/" +
                                                             c.at("cuda_tag").get<std::string>());
    rows[c.at("row").get<std::string>()].insert(c.at("python").get<std::string>());
    row_keys[c.at("row").get<std::string>()].insert(c.at("row_key").get<std::string>());
  }
  // One remote row key per row (the key its record and index live under), a different one per row.
  std::set<std::string> keys;
  for (const auto& [row, k] : row_keys) {
    EXPECT_EQ(k.size(), 1u) << row;
    keys.insert(k.begin(), k.end());
  }
  EXPECT_EQ(keys.size(), row_keys.size());
  EXPECT_EQ(ids.size(), 13u);
  // A row: the cells that differ only in their Python tag, named as shards and CI jobs group them.
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows.at("fa2.8.3-torch2.8-cu128-*-linux_x86_64|80;90;100;120"),
            (std::set<std::string>{"cp311", "cp312", "cp313"}));
  const auto table = run_fabuild(with_budget({"matrix/flash-attn.yaml", "--list"}));
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 14);  // header + 13
}

TEST(Cli, DryRunJsonHasCellsDroppedAndWarnings) {
  const auto path =
      write_matrix("drop.yaml", "versions: [2.8.3]\ntorch: [\"2.7\", \"2.9\"]\ncuda: [\"13.0\"]\npython: [cp312]\n");
  const auto r = run_fabuild(with_budget({path.string(), "--dry-run", "--format", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto plan = nlohmann::json::parse(r.out);
  EXPECT_EQ(plan.at("cells").size(), 1u);
  ASSERT_EQ(plan.at("dropped").size(), 1u);
  EXPECT_EQ(plan["dropped"][0]["id"], "fa2.8.3-torch2.7-cu130-cp312-linux_x86_64");
  EXPECT_THAT(plan["dropped"][0]["reasons"][0].get<std::string>(), HasSubstr("CUDA 13 needs torch >= 2.9"));
}

TEST(Cli, FiltersShardsAndOnly) {
  const auto r = run_fabuild(
      with_budget({"matrix/flash-attn.yaml", "--list", "--torch", "2.8", "--python", "cp311,3.13", "--cuda", "cu128"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fa2.8.3-torch2.8-cu128-cp311-linux_x86_64"));
  EXPECT_THAT(r.out, HasSubstr("fa2.8.3-torch2.8-cu128-cp313-linux_x86_64"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3);

  std::multiset<std::string> union_of_shards;
  for (int k = 1; k <= 3; ++k) {
    const auto s = run_fabuild(
        with_budget({"matrix/flash-attn.yaml", "--list", "--format", "json", "--shard", std::to_string(k) + "/3"}));
    ASSERT_EQ(s.code, 0) << s.err;
    for (const auto& c : nlohmann::json::parse(s.out)) union_of_shards.insert(c["id"].get<std::string>());
  }
  EXPECT_EQ(union_of_shards.size(), 13u);
  EXPECT_EQ(std::set<std::string>(union_of_shards.begin(), union_of_shards.end()).size(), 13u);
}

TEST(Cli, NoCellSelectedExitsThree) {
  // Both values exist in the matrix, but the exclude removes their combination.
  const auto r =
      run_fabuild(with_budget({"matrix/flash-attn.yaml", "--dry-run", "--torch", "2.7", "--python", "cp313"}));
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("fabuild: error: no cell selected"));
  const auto allowed = run_fabuild(
      with_budget({"matrix/flash-attn.yaml", "--list", "--torch", "2.7", "--python", "cp313", "--allow-empty"}));
  EXPECT_EQ(allowed.code, 0);
}

// A range of torch that holds no release yet (a nightly waiting for one): the matrix has no
// cell, which the error says rather than blaming filters that were not given.
TEST(Cli, NoCellSelectedByAnEmptyTorchRangeSaysSo) {
  const auto index = test::process_file("cli-empty-torch-index");  // a directory of no torch wheel
  std::filesystem::create_directories(index);
  const auto path = write_matrix("waiting.yaml",
                                 "versions: [2.8.3]\ntorch: [\">=2.99\"]\ncuda: [\"13.0\"]\n"
                                 "python: [cp312]\ntorch_index: " +
                                     index.string() + "\n");
  const auto r = run_fabuild({path.string(), "--dry-run"});
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("no cell selected: the matrix has no cell: torch \">=2.99\" holds no torch release"));
  EXPECT_THAT(r.err, Not(HasSubstr("filters")));
  EXPECT_EQ(run_fabuild({path.string(), "--dry-run", "--allow-empty"}).code, 0);
}

TEST(Cli, NoCellSelectedSaysWhyCellsWereDropped) {
  const auto path =
      write_matrix("none.yaml", "versions: [2.8.3]\ntorch: [\"2.7\"]\ncuda: [\"13.0\"]\npython: [cp312]\n");
  const auto r = run_fabuild({path.string(), "--dry-run"});
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("fa2.8.3-torch2.7-cu130-cp312-linux_x86_64: torch 2.7 has no CUDA 13 build"));
  EXPECT_THAT(r.out, HasSubstr("dropped by the compatibility rules (1):"));
}

TEST(Cli, BadInputExitsTwoWithWhereAndHint) {
  const auto flag = run_fabuild({"matrix/flash-attn.yaml", "--frobnicate"});
  EXPECT_EQ(flag.code, 2);
  EXPECT_THAT(flag.err, HasSubstr("fabuild: error: "));
  EXPECT_THAT(flag.err, HasSubstr("hint: fabuild --help lists the flags"));

  const auto missing = run_fabuild({"no/such/matrix.yaml", "--dry-run"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err,
              HasSubstr("fabuild: error: cannot read matrix file 'no/such/matrix.yaml': No such file or directory"));

  const auto path =
      write_matrix("typo.yaml", "versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npyton: [cp312]\n");
  const auto typo = run_fabuild({path.string(), "--dry-run"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_EQ(typo.err,
            "fabuild: error: " + path.string() +
                ":4:1: unknown key 'pyton' in the matrix (did you mean 'python'?)\n"
                "  hint: known keys here: package, versions, torch, cuda, python, platform, archs, cxx11_abi, "
                "exclude, include, provision, build, budget, env, compat, wheelhouse, command, source, torch_index, "
                "frontend, ci, container, cache, rocm, rocm_archs, profile, profiles, patches, toolkit, python_env, "
                "naming, artifact, platform_tag, stable_abi, variant\n");

  for (const auto& args : std::vector<std::vector<std::string>>{{"matrix/flash-attn.yaml", "--shard", "3/2"},
                                                                {"matrix/flash-attn.yaml", "--torch", "3.0"},
                                                                {"matrix/flash-attn.yaml", "--python", "cp2"},
                                                                {"matrix/flash-attn.yaml", "--format", "xml"},
                                                                {"matrix/flash-attn.yaml", "--only", "nothing"},
                                                                {"matrix"},
                                                                {}}) {
    const auto r = run_fabuild(args);
    EXPECT_EQ(r.code, 2) << ::testing::PrintToString(args) << r.err;
    EXPECT_THAT(r.err, HasSubstr("fabuild: error: ")) << ::testing::PrintToString(args);
  }
}

TEST(Cli, SeedDefaultsShowWhatTheOldScriptHid) {
  const auto r = run_fabuild({"matrix/seed-defaults.yaml", "--dry-run", "--cores", "2", "--memory-gb", "24",
                              "--torch-index", "https://torch-index.invalid/whl"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fa2.8.2-torch2.8-cu126-cp312-linux_x86_64  80;90 "));
  EXPECT_THAT(r.out, HasSubstr("fa2.8.2-torch2.8-cu128-cp312-linux_x86_64  80;90;100;120"));
  EXPECT_THAT(r.out, HasSubstr("env sets TORCH_CUDA_ARCH_LIST, which flash-attn never reads"));
  EXPECT_THAT(r.out, HasSubstr("note:       max_jobs 48 -> 1"));
}

TEST(Cli, AContainerCellWithNoImageFailsBeforeItStarts) {
  // pull: never and an image that is nowhere: no engine is asked to reach a registry.
  const auto path = write_matrix("container.yaml",
                                 "versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n"
                                 "container: {images: [\"127.0.0.1:9/fabuild-test/absent:1\"], pull: never}\n");
  const fabuild::test::ScratchDir house("cli-wh");  // removed afterwards
  const auto r = run_fabuild(with_budget({path.string(), "-o", house.path().string()}));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
  // With an engine: the image is missing; without one: there is no engine. Both say what to do.
  EXPECT_THAT(
      r.out,
      AnyOf(HasSubstr(
                "no amd64 image for CUDA 12.8 (tried 127.0.0.1:9/fabuild-test/absent:1: not present (pull: never))"),
            HasSubstr("no container engine answers")));
}

TEST(Cli, RoughEdgesAreUsageErrorsWithAHint) {
  // --format alone would start a build: refused.
  auto r = run_fabuild({"matrix/example.yaml", "--format", "json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("add --list (the cells) or --dry-run (the plan)"));
  // Misspelt flags and values: did you mean.
  r = run_fabuild({"matrix/example.yaml", "--pyton", "cp312", "--dry-run"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("fabuild: error: unknown flag --pyton (did you mean '--python'?)\n"));
  r = run_fabuild({"matrix/example.yaml", "--list", "--format", "jsn"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("'jsn' is not table or json (did you mean 'json'?)"));
  r = run_fabuild({"matrix/example.yaml", "--ci-matrix", "githb"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("'githb' is not github or gitlab or buildkite (did you mean 'github'?)"));
  r = run_fabuild({"matrix/example.yaml", "--platform", "linux_arm64", "--dry-run"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("did you mean 'linux_aarch64'?"));
  // An empty shard says so, not that the cells cannot be built.
  r = run_fabuild({"matrix/example.yaml", "--shard", "3/3", "--dry-run"});
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("shard 3/3 is empty"));
  // --help names every exit code.
  r = run_fabuild({"--help"});
  EXPECT_THAT(r.out, HasSubstr("4 another fabuild holds the wheelhouse"));
}

// Hostile and unlucky numbers, paths and files: a clear error and exit 2, at once.
TEST(Cli, NumbersPathsAndFilesThatCannotBeAreRefusedAtOnce) {
  for (const auto& [flag, value, says] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"-j", "0", "--jobs: must be at least 1, not 0"},
           {"--cores", "0", "--cores: must be at least 0.1, not 0"},
           {"--memory-gb", "-5", "--memory-gb: must be at least 0.1, not -5"},
           {"--memory-gb", "inf", "--memory-gb: takes a finite number, not 'inf'"},
           {"--memory-gb", "nan", "--memory-gb: takes a finite number, not 'nan'"},
           {"--cores", "99999999999999999999999", "--cores: must be at most 65536"},
           {"--memory-gb", "1e30", "--memory-gb: must be at most 1048576, not 1e30"},
           {"-j", "1.5", "--jobs: takes a whole number, not 1.5"}}) {
    const auto r = run_fabuild({"matrix/example.yaml", flag, value, "--dry-run"});
    EXPECT_EQ(r.code, 2) << flag << " " << value;
    EXPECT_THAT(r.err, HasSubstr(says)) << flag << " " << value;
    EXPECT_THAT(r.err, Not(HasSubstr("179769313486231570")));
  }
  const auto file = write_matrix("not-a-dir", "x");
  auto r = run_fabuild({"matrix/example.yaml", "-o", file.string(), "--dry-run"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("is a file, not a directory"));
  // One that cannot be made (under a file; in /proc) is bad input too, found before any cell runs.
  r = run_fabuild({"matrix/example.yaml", "-o", (file / "sub").string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the wheelhouse cannot be made: cannot create the directory " + (file / "sub").string() +
                               ": Not a directory"));
  const auto fifo = test::process_file("cli-fifo.yaml");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto started = std::chrono::steady_clock::now();
  r = run_fabuild({fifo.string(), "--dry-run"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("is not a regular file (a FIFO, socket or device)"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  std::filesystem::remove(fifo);
}

// 60 000 versions x 400 torch series x 3 Pythons: 0.6 MB of YAML that would make 72 million
// cells. Counted before a cell is made: exit 2 with the count and what multiplies to it.
TEST(Cli, AMatrixOfMillionsOfCellsIsRefusedBeforeItIsMade) {
  std::string versions;
  for (int a = 1; a < 4; ++a)
    for (int b = 0; b < 100; ++b)
      for (int c = 0; c < 200; ++c) versions += fmt::format("{}\"{}.{}.{}\"", versions.empty() ? "" : ",", a, b, c);
  std::string torch;
  for (int t = 0; t < 400; ++t) torch += fmt::format("{}\"2.{}\"", torch.empty() ? "" : ",", t);
  const auto path = write_matrix("bomb.yaml", "versions: [" + versions + "]\ntorch: [" + torch +
                                                  "]\ncuda: [\"12.8\"]\npython: [cp310, cp311, cp312]\n");
  const auto started = std::chrono::steady_clock::now();
  const auto r = run_fabuild({path.string(), "--dry-run"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("the matrix would make 72000000 cells, more than fabuild plans (250000): 60000 "
                               "versions x 400 torch x 1 cuda x 3 python"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST(Cli, ACellForAnotherPlatformFailsBeforeItStartsAndSaysWhereToBuildIt) {
  const auto path = write_matrix("aarch64.yaml",
                                 "versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n"
                                 "platform: [linux_aarch64]\nprovision: host\n");
  const fabuild::test::ScratchDir house("cli-arm");  // removed afterwards
  const auto r = run_fabuild(with_budget({path.string(), "-o", house.path().string()}));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
  EXPECT_THAT(r.out, HasSubstr("the cell is for linux_aarch64, and this machine builds linux_x86_64"));
  EXPECT_THAT(r.out, HasSubstr("ci.runners: {linux_aarch64: <runner label>}"));
}

}  // namespace
}  // namespace fabuild
