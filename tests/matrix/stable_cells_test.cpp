// Stable-ABI cells (docs/stable-abi.md): one wheel for a torch window, named by its floor, the
// matrix's torch series collapsing into it; the source's needs decide which profiles can be one.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "matrix/select.h"
#include "matrix/stable_cells.h"
#include "support.h"
#include "util/text.h"

namespace fabuild {
namespace {

using test::ids;
using test::spec_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The facts a source directory's setup.py gives (the plan reads them: app/plan.cpp).
MatrixSpec with_stable(MatrixSpec spec, const std::string& floor, const std::string& from,
                       std::vector<std::string> needs, const std::string& limited_api = "") {
  auto preset = std::make_shared<PackagePreset>(*spec.package);
  auto stable = std::make_shared<PackagePreset::StableAbi>();
  stable->floor = *Version::parse(floor);
  stable->from = *Version::parse(from);
  stable->where = "src/setup.py:356";
  for (const auto& n : needs) {
    stable->needs.push_back(n);
    stable->needs_where.push_back("src/setup.py:352");
  }
  stable->limited_api = limited_api;
  preset->stable = std::move(stable);
  if (limited_api.empty() && preset->abi3.empty()) preset->abi3 = "cp310";  // FlashAttention 2's port: always abi3
  spec.package = std::move(preset);
  spec.torch_index = "https://torch-index.invalid/whl";
  return spec;
}

const char* kFa2Port =
    "package: flash-attn\n"
    "versions: [\"2.8.4\"]\n"
    "torch: [\"2.9\", \"2.10\", \"2.11\"]\n"
    "cuda: [\"13.0\"]\n"
    "python: [cp311, cp312]\n"
    "profile: [full, nodropout]\n";

TEST(StableCells, FlashAttention2sPortIsOneWheelForItsWindowWithDropoutOff) {
  const Expansion e = expand(with_stable(spec_of(kFa2Port), "2.10", "2.10", {"FLASH_ATTENTION_DISABLE_DROPOUT"}));
  // full keeps dropout: a wheel per series (abi3 all the same); nodropout from 2.10: one wheel.
  EXPECT_THAT(ids(e.cells), ElementsAre("fa2.8.4-torch2.9-cu130-abi3-linux_x86_64",
                                        "fa2.8.4-torch2.9-cu130-abi3-linux_x86_64-nodropout",
                                        "fa2.8.4-torch2.10-cu130-abi3-linux_x86_64",
                                        "fa2.8.4-torch2.10andhigher-cu130-abi3-linux_x86_64-nodropout",
                                        "fa2.8.4-torch2.11-cu130-abi3-linux_x86_64"));
  const auto window = std::find_if(e.cells.begin(), e.cells.end(), [](const Cell& c) { return c.stable(); });
  ASSERT_NE(window, e.cells.end());
  EXPECT_EQ(window->torch.str(), "2.10");  // built against the oldest series of the window
  EXPECT_EQ(window->stable_floor->str(), "2.10");
  EXPECT_EQ(window->torch_spelling(), "2.10andhigher");
  EXPECT_EQ(window->value(Axis::kTorch), ">=2.10");
  EXPECT_TRUE(e.dropped.empty());
  std::string notes;
  for (const auto& n : e.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("profile full: one wheel per torch series: src/setup.py:356 builds against torch's "
                               "stable ABI only with FLASH_ATTENTION_DISABLE_DROPOUT=TRUE (src/setup.py:352), and "
                               "profile full keeps dropout; profile minimal or nodropout builds it"));
  const auto& served = e.stable.at("fa2.8.4-torch2.10andhigher-cu130-abi3-linux_x86_64-nodropout");
  EXPECT_THAT(served.series, ElementsAre("2.10", "2.11"));
  EXPECT_TRUE(served.not_built.empty());
}

TEST(StableCells, TheBuildSetsTheVariablesTheSourceNeeds) {
  MatrixSpec spec = with_stable(spec_of(kFa2Port), "2.10", "2.10", {"FLASH_ATTENTION_DISABLE_DROPOUT"});
  const Expansion e = expand(spec);
  for (const Cell& c : e.cells) {
    EXPECT_EQ(stable_build_variables(c).empty(), !c.stable()) << c.id();
  }
}

// The example opts in with a variable of its own: only stable_abi: true sets it; and its abi3
// tag comes with the stable build alone, so its Pythons collapse only then.
TEST(StableCells, AnOptInOfTheSourcesOwnIsTakenOnlyWhenAsked) {
  const char* yaml =
      "package: flash-example\n"
      "versions: [\"0.1.0\"]\n"
      "torch: [\"2.11\", \"2.13\"]\n"
      "cuda: [\"13.0\"]\n"
      "python: [cp311, cp312]\n";
  MatrixSpec spec = with_stable(spec_of(yaml), "2.10", "2.10", {"FLASH_EXAMPLE_STABLE_ABI"}, "cp310");
  EXPECT_THAT(ids(expand(spec).cells), ElementsAre("example0.1.0-torch2.11-cu130-cp311-linux_x86_64",
                                                   "example0.1.0-torch2.11-cu130-cp312-linux_x86_64",
                                                   "example0.1.0-torch2.13-cu130-cp311-linux_x86_64",
                                                   "example0.1.0-torch2.13-cu130-cp312-linux_x86_64"));
  spec.stable_abi = StableMode::kYes;
  const Expansion e = expand(spec);
  ASSERT_THAT(ids(e.cells), ElementsAre("example0.1.0-torch2.10andhigher-cu130-abi3-linux_x86_64"));
  EXPECT_EQ(e.cells[0].python.str(), "cp311");
  EXPECT_EQ(e.cells[0].python_tag(), "cp310");
  EXPECT_THAT(stable_build_variables(e.cells[0]), ElementsAre("FLASH_EXAMPLE_STABLE_ABI"));
  spec.stable_abi = StableMode::kNo;
  EXPECT_EQ(expand(spec).cells.size(), 4U);
}

TEST(StableCells, StableAbiTrueRefusesACellTheSourceCannotBuildStably) {
  MatrixSpec spec = with_stable(spec_of(kFa2Port), "2.10", "2.10", {"FLASH_ATTENTION_DISABLE_DROPOUT"});
  spec.stable_abi = StableMode::kYes;
  try {
    expand(spec);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("fa2.8.4-torch2.9-cu130-abi3-linux_x86_64 cannot be built against torch's "
                                    "stable ABI: torch 2.9 is older than 2.10, from which src/setup.py:356 builds "
                                    "against torch's stable ABI"));
    EXPECT_EQ(e.code(), 2);
  }
  // Without the facts (a source read at build time, or one with no TORCH_TARGET_VERSION).
  MatrixSpec plain = spec_of(kFa2Port);
  plain.stable_abi = StableMode::kYes;
  plain.torch_index = "https://torch-index.invalid/whl";
  try {
    expand(plain);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the plan found no TORCH_TARGET_VERSION in flash-attn's setup.py"));
  }
}

TEST(StableCells, FiltersPickTheWindowByAnyTorchItServes) {
  MatrixSpec spec = with_stable(spec_of(kFa2Port), "2.10", "2.10", {"FLASH_ATTENTION_DISABLE_DROPOUT"});
  const Expansion e = expand(spec);
  const auto picked = [&](const std::string& torch) {
    Filters f;
    f[Axis::kTorch] = split(torch, ',');  // as the flag splits it
    f[Axis::kProfile] = {"nodropout"};
    return ids(select_cells(expand(spec), f).cells);
  };
  EXPECT_THAT(picked("2.13"), ElementsAre("fa2.8.4-torch2.10andhigher-cu130-abi3-linux_x86_64-nodropout"));
  EXPECT_THAT(picked(">=2.10"), ElementsAre("fa2.8.4-torch2.10andhigher-cu130-abi3-linux_x86_64-nodropout"));
  EXPECT_THAT(picked("2.10andhigher"), ElementsAre("fa2.8.4-torch2.10andhigher-cu130-abi3-linux_x86_64-nodropout"));
  EXPECT_THAT(picked("2.9"), ElementsAre("fa2.8.4-torch2.9-cu130-abi3-linux_x86_64-nodropout"));
  // A range with a bound is one value, though --torch splits at its comma: the window from its floor.
  EXPECT_THAT(picked(">=2.10,<2.14"), ElementsAre("fa2.8.4-torch2.10andhigher-cu130-abi3-linux_x86_64-nodropout"));
}

TEST(StableCells, AWindowDroppedForEachOfItsSeriesIsOneCellDroppedWithEachReason) {
  MatrixSpec spec = with_stable(spec_of("package: flash-attn\nversions: [\"2.8.4\"]\ntorch: [\"2.12\", \"2.13\"]\n"
                                        "cuda: [\"12.6\"]\npython: [cp311]\nprofile: [nodropout]\n"),
                                "2.10", "2.10", {"FLASH_ATTENTION_DISABLE_DROPOUT"});
  spec.torch_index.clear();  // pip's index: torch 2.12 and 2.13 are cu130 builds there, no cu126
  const Expansion e = expand(spec);
  EXPECT_TRUE(e.cells.empty());
  ASSERT_EQ(e.dropped.size(), 1U);
  EXPECT_EQ(e.dropped[0].cell.id(), "fa2.8.4-torch2.10andhigher-cu126-abi3-linux_x86_64-nodropout");
  ASSERT_EQ(e.dropped[0].reasons.size(), 2U);
  EXPECT_THAT(e.dropped[0].reasons[0], HasSubstr("torch 2.12"));
  EXPECT_THAT(e.dropped[0].reasons[1], HasSubstr("torch 2.13"));
}

TEST(StableCells, ATorchRangeIsReadBesideTheSeries) {
  const MatrixSpec spec = spec_of(
      "versions: [\"2.8.3\"]\ntorch: [\"2.9\", \">=2.11\"]\ncuda: [\"13.0\"]\npython: [cp312]\nstable_abi: false\n");
  ASSERT_EQ(spec.torch.size(), 1U);
  EXPECT_EQ(spec.torch[0].value.str(), "2.9");
  ASSERT_EQ(spec.torch_ranges.size(), 1U);
  EXPECT_EQ(spec.torch_ranges[0].value.str(), ">=2.11");
  EXPECT_EQ(spec.torch_ranges[0].where.line, 2);
  EXPECT_EQ(spec.stable_abi, StableMode::kNo);
  EXPECT_THAT(test::error_of("versions: [\"2.8.3\"]\ntorch: [\">=2\"]\ncuda: [\"13.0\"]\npython: [cp312]\n").message,
              HasSubstr("'>=2' is not a torch range: its floor '2' is not a torch series or release"));
  EXPECT_THAT(test::error_of("versions: [\"2.8.3\"]\ntorch: [\"2.9\"]\ncuda: [\"13.0\"]\npython: [cp312]\n"
                             "stable_abi: maybe\n")
                  .message,
              HasSubstr("stable_abi must be auto, true or false, not 'maybe'"));
}

}  // namespace
}  // namespace fabuild
