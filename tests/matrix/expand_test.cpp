#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "matrix/match.h"
#include "matrix/rules.h"
#include "support.h"
#include "util/text.h"

namespace fabuild {
namespace {

using test::error_of;
using test::expand_yaml;
using test::ids;
using test::kBase;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const DroppedCell* find_dropped(const Expansion& e, const std::string& id) {
  for (const auto& d : e.dropped) {
    if (d.cell.id() == id) return &d;
  }
  return nullptr;
}

const Cell* find_cell(const Expansion& e, const std::string& id) {
  for (const auto& c : e.cells) {
    if (c.id() == id) return &c;
  }
  return nullptr;
}

TEST(Expand, CrossProductInFileOrder) {
  const Expansion e = expand_yaml(kBase);
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.7-cu126-cp311-linux_x86_64", "fa2.8.3-torch2.7-cu126-cp312-linux_x86_64",
                          "fa2.8.3-torch2.7-cu128-cp311-linux_x86_64", "fa2.8.3-torch2.7-cu128-cp312-linux_x86_64",
                          "fa2.8.3-torch2.8-cu126-cp311-linux_x86_64", "fa2.8.3-torch2.8-cu126-cp312-linux_x86_64",
                          "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64"));
  EXPECT_TRUE(e.dropped.empty());
  EXPECT_TRUE(e.warnings.empty());
}

TEST(Expand, ExcludeIsAPartialMatch) {
  const Expansion e =
      expand_yaml(std::string(kBase) + "exclude: [{torch: \"2.7\", python: cp311}, {cuda: cu126, torch: \"2.8\"}]\n");
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.7-cu126-cp312-linux_x86_64", "fa2.8.3-torch2.7-cu128-cp312-linux_x86_64",
                          "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64"));
}

TEST(Expand, ExcludeValuesMayBeListsAndGlobs) {
  const Expansion e = expand_yaml(std::string(kBase) + "exclude: [{python: \"cp31*\", cuda: [\"12.6\", \"12.7\"]}]\n");
  EXPECT_EQ(e.cells.size(), 4u);
  for (const auto& c : e.cells) EXPECT_EQ(c.cuda.toolkit.str(), "12.8");
}

TEST(Expand, IncludeExtendsMatchingCells) {
  const Expansion e = expand_yaml(std::string(kBase) +
                                  "include:\n"
                                  "  - {cuda: \"12.8\", archs: \"80;90;100;120\"}\n"
                                  "  - {cuda: \"12.8\", torch: \"2.8\", build: {max_jobs: 3}, env: {A: \"1\"}}\n"
                                  "  - {python: cp312, torch: \"2.8\", cuda: \"12.8\", env: {A: \"2\"}}\n");
  EXPECT_EQ(e.cells.size(), 8u);  // nothing added
  const Cell* c = find_cell(e, "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(to_string(c->archs()), "80;90;100;120");
  EXPECT_EQ(c->build().max_jobs, 3);
  EXPECT_EQ(c->env().at("A"), "2");  // a later include overwrites what an earlier one added
  const Cell* other = find_cell(e, "fa2.8.3-torch2.7-cu128-cp311-linux_x86_64");
  EXPECT_EQ(to_string(other->archs()), "80;90;100;120");
  EXPECT_FALSE(other->build().max_jobs.has_value());
  const Cell* cu126 = find_cell(e, "fa2.8.3-torch2.8-cu126-cp312-linux_x86_64");
  EXPECT_EQ(to_string(cu126->archs()), "80;90");  // flash-attn's default, less 100/120 below CUDA 12.8
  EXPECT_THAT(cu126->archs_from(), HasSubstr("less what CUDA 12.6 cannot build"));
}

TEST(Expand, IncludeAddsACellWhenItMatchesNone) {
  const Expansion e = expand_yaml(std::string(kBase) +
                                  "include:\n"
                                  "  - {torch: \"2.8\", cuda: \"12.8\", python: cp313}\n"
                                  "  - {torch: \"2.8\", cuda: \"12.8\", python: cp313, archs: \"90\"}\n");
  // Both entries name the same new cell: one cell, with the settings of both.
  ASSERT_EQ(e.cells.size(), 9u);
  EXPECT_EQ(e.cells.back().id(), "fa2.8.3-torch2.8-cu128-cp313-linux_x86_64");
  EXPECT_EQ(e.cells.back().origin().str(), "m.yaml:7:5");
  EXPECT_EQ(to_string(e.cells.back().archs()), "90");
}

TEST(Expand, IncludeThatCannotFormACellIsAnError) {
  const auto e = error_of(std::string(kBase) + "include: [{python: cp313}]\n");
  EXPECT_EQ(e.message,
            "m.yaml:6:11: this include matches no cell, and cannot add one: it does not say which torch, cuda (the "
            "matrix lists several)");
  EXPECT_THAT(e.hint, HasSubstr("name every axis that has more than one value"));
}

TEST(Expand, IncludeReaddsAnExcludedCell) {
  const Expansion e = expand_yaml(std::string(kBase) + "exclude: [{python: cp312}]\n" +
                                  "include: [{torch: \"2.8\", cuda: \"12.8\", python: cp312}]\n");
  EXPECT_EQ(e.cells.size(), 5u);
  EXPECT_EQ(e.cells.back().id(), "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64");
}

TEST(Expand, CudaSetNamesToolkitAndTorchBuild) {
  const Expansion e = expand_yaml("versions: [2.8.3]\ntorch: [\"2.7\", \"2.8\"]\ncuda: [\"12.9\"]\npython: [cp312]\n");
  // Toolkit 12.9 compiles against the nearest torch build not newer: cu128 for 2.7, cu129 for 2.8.
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.7-cu128-cp312-linux_x86_64", "fa2.8.3-torch2.8-cu129-cp312-linux_x86_64"));
  EXPECT_EQ(e.cells[0].cuda.toolkit.str(), "12.9");
  const Expansion x = expand_yaml(
      "versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [{toolkit: \"12.9\", torch_cuda: \"12.6\"}]\npython: [cp312]\n");
  EXPECT_THAT(ids(x.cells), ElementsAre("fa2.8.3-torch2.8-cu126-cp312-linux_x86_64"));
}

TEST(Expand, ImpossibleCellsAreDroppedWithTheReason) {
  const Expansion e =
      expand_yaml("versions: [2.8.3]\ntorch: [\"2.7\", \"2.9\"]\ncuda: [\"12.6\", \"13.0\"]\npython: [cp39, cp312]\n");
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.7-cu126-cp39-linux_x86_64", "fa2.8.3-torch2.7-cu126-cp312-linux_x86_64",
                          "fa2.8.3-torch2.9-cu126-cp312-linux_x86_64", "fa2.8.3-torch2.9-cu130-cp312-linux_x86_64"));
  const auto* cu13 = find_dropped(e, "fa2.8.3-torch2.7-cu130-cp312-linux_x86_64");
  ASSERT_NE(cu13, nullptr);
  EXPECT_THAT(cu13->reasons,
              ElementsAre("torch 2.7 has no CUDA 13 build not newer than 13.0 (builds: cu118, cu126, cu128); "
                          "CUDA 13 needs torch >= 2.9"));
  const auto* py39 = find_dropped(e, "fa2.8.3-torch2.9-cu126-cp39-linux_x86_64");
  ASSERT_NE(py39, nullptr);
  EXPECT_THAT(py39->reasons, ElementsAre("torch 2.9 ships for Python 3.10 to 3.14, not 3.9"));
  EXPECT_EQ(e.dropped.size(), 4u);
}

TEST(Expand, ArchesTheToolkitCannotBuildDropTheCell) {
  const Expansion e = expand_yaml(std::string(kBase) + "archs: \"80;90;100;120\"\n");
  EXPECT_EQ(e.cells.size(), 4u);
  const auto* d = find_dropped(e, "fa2.8.3-torch2.8-cu126-cp312-linux_x86_64");
  ASSERT_NE(d, nullptr);
  EXPECT_THAT(d->reasons,
              ElementsAre("arch 100;120 needs CUDA >= 12.8, this cell compiles with 12.6 (set archs per CUDA set)"));
  const Expansion per_set =
      expand_yaml(std::string(kBase) + "archs: {default: \"80;90\", \"12.8\": \"80;90;100;120\"}\n");
  EXPECT_EQ(per_set.cells.size(), 8u);
}

TEST(Expand, MinimumTorchOfTheFlashAttentionRelease) {
  const Expansion e = expand_yaml("versions: [2.8.3]\ntorch: [\"2.1\"]\ncuda: [\"12.1\"]\npython: [cp311]\n");
  ASSERT_EQ(e.dropped.size(), 1u);
  EXPECT_THAT(e.dropped[0].reasons, ElementsAre("flash-attn 2.8.3 needs torch >= 2.2"));
  EXPECT_THAT(e.warnings, ElementsAre(HasSubstr("m.yaml:2:9: torch 2.1 is not in the compatibility tables")));
}

TEST(Expand, UnknownTorchIsKeptWithAWarning) {
  const Expansion e = expand_yaml("versions: [2.8.3]\ntorch: [\"2.16\"]\ncuda: [\"13.0\"]\npython: [cp313]\n");
  EXPECT_THAT(ids(e.cells), ElementsAre("fa2.8.3-torch2.16-cu130-cp313-linux_x86_64"));
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_THAT(e.warnings[0], HasSubstr("torch 2.16 is not in the compatibility tables; its cells are kept unchecked"));
}

TEST(Expand, Cxx11Abi) {
  const Expansion e = expand_yaml(
      "versions: [2.8.3]\ntorch: [\"2.6\", \"2.8\"]\ncuda: [\"12.4\", \"12.6\"]\npython: [cp312]\ncxx11_abi: "
      "[\"TRUE\", \"FALSE\"]\nexclude: [{torch: \"2.6\", cuda: \"12.6\"}, {torch: \"2.8\", cuda: \"12.4\"}]\n");
  // The default is the ABI of torch's build: FALSE for torch 2.6's cu124, TRUE from 2.7; only a
  // non-default ABI shows in the id.
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.6-cu124-cp312-linux_x86_64-cxx11abiTRUE",
                          "fa2.8.3-torch2.6-cu124-cp312-linux_x86_64", "fa2.8.3-torch2.8-cu126-cp312-linux_x86_64"));
  ASSERT_EQ(e.dropped.size(), 1u);
  EXPECT_EQ(e.dropped[0].cell.id(), "fa2.8.3-torch2.8-cu126-cp312-linux_x86_64-cxx11abiFALSE");
  EXPECT_THAT(e.dropped[0].reasons,
              ElementsAre("torch 2.8 wheels for linux_x86_64 use the C++11 ABI only; a cxx11abiFALSE build would not "
                          "import"));
  EXPECT_EQ(expand_yaml(std::string(kBase)).cells[0].abi, Abi::kTrue);
}

// The Windows manual build's CUDA_SETS spell 12.6 as "126"; the plan shows 12.6.
TEST(Expand, CudaSetsTakeTheBuildScriptsSpelling) {
  const Expansion e =
      expand_yaml("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"126\", cu128, \"12.9\"]\npython: [cp312]\n");
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.8-cu126-cp312-linux_x86_64", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64",
                          "fa2.8.3-torch2.8-cu129-cp312-linux_x86_64"));
  EXPECT_EQ(e.cells[0].cuda.toolkit.str(), "12.6");
  EXPECT_FALSE(parse_cuda_version("12").has_value());
  EXPECT_FALSE(parse_cuda_version("1260").has_value());
}

TEST(Expand, WindowsCellsNeedAHost) {
  const Expansion e =
      expand_yaml(std::string(kBase) + "platform: [win_amd64]\nexclude: [{torch: \"2.7\"}, {cuda: \"12.6\"}]\n");
  ASSERT_EQ(e.dropped.size(), 2u);
  EXPECT_THAT(e.dropped[0].reasons, ElementsAre(HasSubstr("win_amd64 wheels are built on a Windows host")));
  const Expansion host = expand_yaml(std::string(kBase) + "platform: [win_amd64]\nprovision: host\n");
  EXPECT_EQ(host.cells.size(), 8u);
  EXPECT_EQ(host.cells[0].id(), "fa2.8.3-torch2.7-cu126-cp311-win_amd64");
  EXPECT_EQ(host.cells[0].abi, Abi::kFalse);
}

TEST(Expand, TheWorkedExampleOfTheDocs) {
  const Expansion e = expand_yaml(
      "versions: [\"2.8.3\"]\ntorch: [\"2.7\", \"2.8\"]\ncuda: [\"12.8\", \"13.0\"]\npython: [cp312, cp313]\n"
      "exclude:\n  - {torch: \"2.7\", python: cp313}\n"
      "include:\n  - {cuda: \"12.8\", archs: \"80;90;100;120\"}\n  - {torch: \"2.9\", cuda: \"13.0\", python: "
      "cp314}\n");
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.7-cu128-cp312-linux_x86_64", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64",
                          "fa2.8.3-torch2.8-cu128-cp313-linux_x86_64", "fa2.8.3-torch2.9-cu130-cp314-linux_x86_64"));
  EXPECT_EQ(e.dropped.size(), 3u);
  for (const auto& c : e.cells) EXPECT_EQ(to_string(c.archs()), "80;90;100;120");
}

// The ids the duplicate check spelled are kept for the plan: each the id of its cell, however
// the cell came to be (product, include, abi3 collapse).
TEST(Expand, KeepsEachCellsId) {
  for (const char* yaml :
       {"versions: [\"2.8.3\", \"2.8.2\"]\ntorch: [\"2.7\", \"2.8\"]\ncuda: [\"12.6\", \"12.8\"]\n"
        "python: [cp311, cp312]\nexclude:\n  - {torch: \"2.7\", python: cp311}\n"
        "include:\n  - {cuda: \"12.8\", env: {A: \"1\"}}\n"
        "  - {torch: \"2.9\", cuda: \"13.0\", python: cp314, version: \"2.8.3\"}\n",
        "package: flash-attn-3\nversions: [\"3.0.0b1\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\", \"12.9\"]\n"
        "python: [cp312, cp310, cp311]\nsource: {path: fa}\n"}) {
    const Expansion e = expand_yaml(yaml);
    EXPECT_EQ(e.ids, ids(e.cells)) << yaml;
  }
}

// The rules asked once a row give each cell what drop_reasons gives it alone, in the same
// order, whichever row came before: here over cells each rule drops, asked forwards and back.
TEST(Expand, RulesAskedOnceARowGiveEachCellItsOwnReasons) {
  const Expansion e = expand_yaml(
      "versions: [\"2.5.0\", 2.8.3]\ntorch: [\"2.3\", \"2.6\", \"2.8\"]\ncuda: [\"11.8\", \"12.4\", \"12.8\"]\n"
      "python: [cp38, cp312, cp314]\nplatform: [linux_x86_64, win_amd64]\ncxx11_abi: [\"FALSE\", \"TRUE\"]\n"
      "archs: \"80;90;100\"\nprovision: host\n");
  std::vector<const Cell*> cells;
  for (const auto& c : e.cells) cells.push_back(&c);
  for (const auto& d : e.dropped) cells.push_back(&d.cell);
  ASSERT_GT(e.dropped.size(), 20u);
  const CompatTables& compat = CompatTables::builtin();
  for (const TorchFrom from : {TorchFrom::kPipIndex, TorchFrom::kTorchIndex}) {
    DropRules rules(compat, from);
    for (const Cell* c : cells) EXPECT_EQ(rules.reasons(*c), drop_reasons(*c, compat, from)) << c->id();
    for (auto c = cells.rbegin(); c != cells.rend(); ++c)
      EXPECT_EQ(rules.reasons(**c), drop_reasons(**c, compat, from));
  }
}

// A collapse and the compatibility rules drop cells in one list, in the matrix's order.
TEST(Expand, DroppedCellsKeepTheMatrixOrderWhicheverCheckDroppedThem) {
  const Expansion e = expand_yaml(
      "versions: [2.8.3]\ntorch: [\"2.7\", \"2.8\"]\ncuda: [\"12.6\", \"12.8\", \"12.9\"]\npython: [cp312, cp314]\n");
  std::vector<std::string> dropped;
  for (const auto& d : e.dropped) {
    dropped.push_back(fmt::format("{} {} {}", d.cell.torch.str(), d.cell.cuda.toolkit.str(), d.cell.python.str()));
  }
  EXPECT_THAT(dropped, ElementsAre("2.7 12.6 cp314", "2.7 12.8 cp314", "2.7 12.9 cp312", "2.7 12.9 cp314",
                                   "2.8 12.6 cp314", "2.8 12.8 cp314", "2.8 12.9 cp314"));
  EXPECT_THAT(e.dropped[2].reasons.front(), HasSubstr("builds the same wheel as"));
  EXPECT_EQ(e.cells.size(), 5u);
  EXPECT_EQ(e.ids.size(), 5u);
}

// Cells share their settings until an include changes some of them: the others keep theirs.
TEST(Expand, AnIncludeChangesOnlyTheCellsItExtends) {
  const Expansion e = expand_yaml(std::string(kBase) +
                                  "env: {A: \"0\"}\ninclude:\n  - {cuda: \"12.8\", env: {A: \"1\"}, archs: \"90\"}\n");
  for (const auto& c : e.cells) {
    const bool extended = c.cuda.toolkit.str() == "12.8";
    EXPECT_EQ(c.env().at("A"), extended ? "1" : "0") << c.id();
    EXPECT_EQ(to_string(c.archs()), extended ? "90" : "80;90") << c.id();  // CUDA 12.6: no 100/120
  }
}

// A natural matrix: CUDA 12.9 for torch 2.7 means torch's cu128 build, as 12.8 does. The
// later cell is dropped with a note naming the kept one; --strict makes it an error.
TEST(Expand, CellsThatCollapseAreDroppedNamingTheKeptOne) {
  const std::string yaml =
      "versions: [2.8.3]\ntorch: [\"2.7\", \"2.8\"]\ncuda: [\"12.6\", \"12.8\", \"12.9\"]\npython: [cp312]\n";
  const Expansion e = expand_yaml(yaml);
  EXPECT_THAT(ids(e.cells),
              ElementsAre("fa2.8.3-torch2.7-cu126-cp312-linux_x86_64", "fa2.8.3-torch2.7-cu128-cp312-linux_x86_64",
                          "fa2.8.3-torch2.8-cu126-cp312-linux_x86_64", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64",
                          "fa2.8.3-torch2.8-cu129-cp312-linux_x86_64"));
  ASSERT_EQ(e.dropped.size(), 1u);
  EXPECT_EQ(e.dropped[0].cell.cuda.toolkit.str(), "12.9");
  EXPECT_THAT(e.dropped[0].reasons,
              ElementsAre("cuda 12.9 builds the same wheel as fa2.8.3-torch2.7-cu128-cp312-linux_x86_64 (cuda 12.8), "
                          "which is kept"));

  MatrixSpec spec = test::spec_of(yaml);
  spec.torch_index = "https://torch-index.invalid/whl";
  try {
    expand(spec, {.strict = true});
    ADD_FAILURE() << "--strict accepted a collapse";
  } catch (const UserError& error) {
    EXPECT_THAT(error.what(), HasSubstr("cuda 12.9 for torch 2.7 builds the same wheel as "
                                        "fa2.8.3-torch2.7-cu128-cp312-linux_x86_64 (cuda 12.8), which is kept"));
    EXPECT_THAT(error.hint(), HasSubstr("--strict"));
  }
  // Spelled out, the same pair collapses the same way.
  const Expansion spelled = expand_yaml(
      "versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\", {toolkit: \"12.9\", torch_cuda: \"12.8\"}]\npython: "
      "[cp312]\n");
  EXPECT_THAT(ids(spelled.cells), ElementsAre("fa2.8.3-torch2.8-cu128-cp312-linux_x86_64"));
  EXPECT_EQ(spelled.dropped.size(), 1u);
}

// A toolkit release ("12.9.1", as FlashAttention's publish workflow pins them): ids, labels
// and torch's build go by 12.9; filters by 12.9 or 12.9.1 pick it, by 12.9.2 not.
TEST(Expand, AToolkitReleaseIsAcceptedAndFilteredBySeriesOrRelease) {
  const Expansion e =
      expand_yaml("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.9.1\", \"13.0.1\"]\npython: [cp312]\n");
  ASSERT_EQ(e.cells.size(), 1u);  // torch 2.8 has no CUDA 13 build
  const Cell& c = e.cells.front();
  EXPECT_EQ(c.id(), "fa2.8.3-torch2.8-cu129-cp312-linux_x86_64");
  EXPECT_EQ(c.cuda.toolkit.str(), "12.9.1");
  EXPECT_EQ(c.value(Axis::kGpu), "12.9.1");
  EXPECT_TRUE(axis_matches(c, Axis::kGpu, "12.9"));
  EXPECT_TRUE(axis_matches(c, Axis::kGpu, "12.9.1"));
  EXPECT_TRUE(axis_matches(c, Axis::kGpu, "cu129"));
  EXPECT_FALSE(axis_matches(c, Axis::kGpu, "12.9.2"));
}

// Each FlashAttention release's own arch list (its setup.py by tag): sm_110 from 2.8.4; before
// 2.7.3 no arch list at all (sm_80 and sm_90, always).
TEST(Expand, ArchsFollowTheFlashAttentionRelease) {
  const Expansion defaults =
      expand_yaml("versions: [\"2.6.3\", \"2.8.3\", \"2.8.4\"]\ntorch: [\"2.9\"]\ncuda: [\"13.0\"]\npython: [cp312]\n");
  ASSERT_EQ(defaults.cells.size(), 3u);
  EXPECT_EQ(to_string(defaults.cells[0].archs()), "80;90");
  EXPECT_EQ(to_string(defaults.cells[1].archs()), "80;90;100;120");
  EXPECT_EQ(to_string(defaults.cells[2].archs()), "80;90;100;110;120");

  const Expansion named = expand_yaml(
      "versions: [\"2.6.3\", \"2.8.3\", \"2.8.4\"]\ntorch: [\"2.9\"]\ncuda: [\"13.0\"]\n"
      "python: [cp312]\narchs: \"90;110\"\n");
  EXPECT_THAT(ids(named.cells), ElementsAre("fa2.8.4-torch2.9-cu130-cp312-linux_x86_64"));
  const DroppedCell* old = find_dropped(named, "fa2.6.3-torch2.9-cu130-cp312-linux_x86_64");
  ASSERT_NE(old, nullptr);
  EXPECT_THAT(old->reasons, ElementsAre("flash-attn 2.6.3's setup.py reads no arch list and always builds 80;90; build "
                                        "80;90 or a release that reads FLASH_ATTN_CUDA_ARCHS"));
  const DroppedCell* no110 = find_dropped(named, "fa2.8.3-torch2.9-cu130-cp312-linux_x86_64");
  ASSERT_NE(no110, nullptr);
  EXPECT_THAT(no110->reasons,
              ElementsAre("flash-attn 2.8.3's setup.py knows archs 80;90;100;120 and would skip 110; name "
                          "archs without 110 for it (an include with version: \"2.8.3\" and archs:)"));
}

// Two different builds claiming one file stay an error, naming both entries.
TEST(Expand, TwoDifferentBuildsOfOneWheelIsAnError) {
  const auto e = error_of(
      "versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\", {toolkit: \"12.9\", torch_cuda: \"12.8\"}]\n"
      "python: [cp312]\ninclude:\n  - {cuda: \"12.9\", archs: \"90\"}\n");
  EXPECT_THAT(e.message, HasSubstr("m.yaml:6:"));  // the include that named the archs
  EXPECT_THAT(e.message, HasSubstr("two different builds would file the same wheel: "
                                   "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64 (archs 90 against 80;90;100;120)"));
  EXPECT_THAT(e.hint, HasSubstr("the include at line 6 and the matrix's axes give it different settings"));
}

// Archs that follow each cell's GPU set are not two intents: torch 2.6 has no cu128 build, so
// its CUDA 12.8 cell is the cu126 wheel again, built with the package default for 12.8's
// toolkit (80;90;100;120) where 12.6's builds 80;90. The later cell is dropped, saying so.
TEST(Expand, CellsWhoseArchsFollowTheirCudaSetCollapseWithANote) {
  const std::string yaml = "versions: [2.8.3]\ntorch: [\"2.6\"]\ncuda: [\"12.6\", \"12.8\"]\npython: [cp312]\n";
  MatrixSpec spec = test::spec_of(yaml);
  spec.torch_index = "https://torch-index.invalid/whl";
  const Expansion e = expand(spec);
  EXPECT_THAT(ids(e.cells), ElementsAre("fa2.8.3-torch2.6-cu126-cp312-linux_x86_64"));
  EXPECT_EQ(to_string(e.cells[0].archs()), "80;90");
  ASSERT_EQ(e.dropped.size(), 1u);
  EXPECT_THAT(e.dropped[0].reasons,
              ElementsAre("cuda 12.8 builds the same wheel as fa2.8.3-torch2.6-cu126-cp312-linux_x86_64 (cuda 12.6), "
                          "which is kept (its own archs would be 80;90;100;120, the kept one's are 80;90)"));
  EXPECT_THROW(expand(spec, {.strict = true}), UserError);

  // Two pins of one series file one torch2.8 wheel: the pin, not the CUDA set, tells them apart.
  const Expansion pins =
      expand_yaml("versions: [2.8.3]\ntorch: [\"2.8.0\", \"2.8.1\"]\ncuda: [\"12.8\"]\npython: [cp312]\n");
  ASSERT_EQ(pins.dropped.size(), 1u);
  EXPECT_THAT(pins.dropped[0].reasons,
              ElementsAre("torch 2.8.1 builds the same wheel as fa2.8.3-torch2.8-cu128-cp312-linux_x86_64 (torch "
                          "2.8.0), which is kept"));
  // A pin in the series the matrix names (equal versions, spelled apart): the note names the
  // torch, not the CUDA set the two share.
  const Expansion pinned = expand_yaml(
      "versions: [2.8.3]\ntorch: [\"2.11\"]\ncuda: [\"13.0\"]\npython: [cp311, cp312]\n"
      "include: [{torch: \"2.11.0\", python: cp311}]\n");
  ASSERT_EQ(pinned.dropped.size(), 1u);
  EXPECT_THAT(pinned.dropped[0].reasons,
              ElementsAre("torch 2.11.0 builds the same wheel as fa2.8.3-torch2.11-cu130-cp311-linux_x86_64 (torch "
                          "2.11), which is kept"));
}

// Without torch_index pip installs PyPI's torch: one CUDA build per series (torch_pypi_cuda).
TEST(Expand, PipIndexHasPypiBuildsOnly) {
  const char* yaml =
      "versions: [2.8.3]\ntorch: [\"2.8\", \"2.11\"]\ncuda: [\"12.6\", \"12.8\", \"13.0\"]\npython: [cp312]\n";
  const Expansion pip = expand(test::spec_of(yaml));
  EXPECT_THAT(ids(pip.cells),
              ElementsAre("fa2.8.3-torch2.8-cu128-cp312-linux_x86_64", "fa2.8.3-torch2.11-cu130-cp312-linux_x86_64"));
  const DroppedCell* d = find_dropped(pip, "fa2.8.3-torch2.8-cu126-cp312-linux_x86_64");
  ASSERT_NE(d, nullptr);
  EXPECT_THAT(d->reasons,
              ElementsAre("pip's index has torch 2.8 as a cu128 build (PyPI's) and no cu126; set torch_index to "
                          "a PyTorch-style index with cu126 builds, or pick CUDA 12.8"));
  // An index of torch's own builds has them all; the tables say which.
  const Expansion index = expand(test::spec_of(std::string(yaml) + "torch_index: https://torch-index.invalid/whl\n"));
  EXPECT_EQ(index.cells.size(), 5u);  // torch 2.8 has no CUDA 13 build
  // The table is overridable, as the others are.
  const Expansion moved = expand(test::spec_of(std::string(yaml) + "compat: {torch_pypi_cuda: {\"2.8\": \"12.6\"}}\n"));
  EXPECT_THAT(ids(moved.cells),
              ElementsAre("fa2.8.3-torch2.8-cu126-cp312-linux_x86_64", "fa2.8.3-torch2.11-cu130-cp312-linux_x86_64"));
  // A command cell gets its torch itself, wherever from.
  EXPECT_EQ(expand(test::spec_of(std::string(yaml) + "command: [\"true\"]\n")).cells.size(), 5u);
}

TEST(Expand, TorchSeriesThroughTwoFifteen) {
  const Expansion e = expand(
      test::spec_of("package: flash-example\nversions: [0.1.0]\ntorch: [\"2.11\", \"2.13\", \"2.15\"]\n"
                    "cuda: [{toolkit: \"13.0\", torch_cuda: \"13.0\"}, {toolkit: \"13.2\", torch_cuda: \"13.2\"}]\n"
                    "python: [cp310, cp312, cp315]\nsource: {path: .}\n"));
  EXPECT_THAT(
      ids(e.cells),
      ElementsAre("example0.1.0-torch2.11-cu130-cp310-linux_x86_64", "example0.1.0-torch2.11-cu130-cp312-linux_x86_64",
                  "example0.1.0-torch2.13-cu130-cp310-linux_x86_64", "example0.1.0-torch2.13-cu130-cp312-linux_x86_64",
                  "example0.1.0-torch2.15-cu132-cp312-linux_x86_64",
                  "example0.1.0-torch2.15-cu132-cp315-linux_x86_64"));
  const auto reasons = [&](const std::string& id) {
    const DroppedCell* d = find_dropped(e, id);
    return d == nullptr ? std::string("not dropped") : join(d->reasons, "; ");
  };
  EXPECT_EQ(reasons("example0.1.0-torch2.11-cu132-cp312-linux_x86_64"),
            "torch 2.11 has no cu132 build (builds: cu126, cu128, cu130)");
  EXPECT_THAT(reasons("example0.1.0-torch2.13-cu132-cp312-linux_x86_64"),
              HasSubstr("pip's index has torch 2.13 as a cu130 build"));
  EXPECT_EQ(reasons("example0.1.0-torch2.15-cu130-cp312-linux_x86_64"),
            "torch 2.15 has no cu130 build (builds: cu132)");
  EXPECT_THAT(reasons("example0.1.0-torch2.15-cu132-cp310-linux_x86_64"),
              HasSubstr("torch 2.15 ships for Python 3.11 to 3.15, not 3.10"));
  EXPECT_THAT(reasons("example0.1.0-torch2.13-cu130-cp315-linux_x86_64"),
              HasSubstr("torch 2.13 ships for Python 3.10 to 3.14, not 3.15"));
}

TEST(Expand, ToolkitSource) {
  const Expansion e =
      expand_yaml(std::string(kBase) +
                  "provision: host\ntoolkit: pip\ninclude:\n  - {torch: \"2.9\", cuda: \"13.0\", python: cp312}\n");
  EXPECT_THAT(ids(e.cells), ElementsAre("fa2.8.3-torch2.9-cu130-cp312-linux_x86_64"));
  EXPECT_EQ(e.cells[0].toolkit_source(), ToolkitSource::kPip);
  const DroppedCell* d = find_dropped(e, "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64");
  ASSERT_NE(d, nullptr);
  EXPECT_THAT(d->reasons,
              ElementsAre("toolkit: pip, but PyPI has no CUDA 12.8 compiler (its 12.x packages carry ptxas only); "
                          "use a host toolkit (toolkit: auto or host) or provision: container"));
  // Per CUDA set through an include; container cells bring their toolkit in the image.
  const Expansion mixed =
      expand_yaml(std::string(kBase) + "provision: host\ninclude:\n  - {cuda: \"12.8\", toolkit: host}\n");
  for (const auto& c : mixed.cells) {
    EXPECT_EQ(to_string(c.toolkit_source()), c.cuda.toolkit.str() == "12.8" ? "host" : "auto") << c.id();
  }
  EXPECT_EQ(expand_yaml(std::string(kBase) + "toolkit: pip\n").cells.size(), 8u);  // provision: container
  EXPECT_EQ(error_of(std::string(kBase) + "toolkit: \"13.0\"\n").message,
            "m.yaml:6:10: toolkit must be auto, host or pip, not '13.0'");
  EXPECT_THAT(error_of(std::string(kBase) + "toolkit: \"13.0\"\n").hint, HasSubstr("CUDA versions go under cuda:"));
  EXPECT_EQ(error_of(std::string(kBase) + "python_env: conda\n").message,
            "m.yaml:6:13: python_env must be auto, uv or pip, not 'conda'");
  EXPECT_EQ(test::spec_of(std::string(kBase) + "python_env: uv\n").python_env, PythonEnvTool::kUv);
}

}  // namespace
}  // namespace fabuild
