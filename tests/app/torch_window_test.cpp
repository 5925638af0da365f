// What the torch index has, applied to a matrix (app/torch_window.h): ranges become the series
// the index has, its CUDA builds replace the built-in table's, and a stable-ABI cell is verified
// under every release of its window of its CUDA major.

#include "app/torch_window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "../support/fake_system.h"
#include "../support/scratch_dir.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "util/error.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Version V(const char* s) { return *Version::parse(s); }
TorchRelease R(const char* version, const char* cuda, std::string tag = "", const char* python = "cp310") {
  return {V(version), V(cuda), std::move(tag), *PythonTag::parse(python)};
}

// PyPI's torch as of this writing: one CUDA build per release.
TorchResolution pypi() {
  TorchResolution r;
  r.asked = true;
  r.index = "pip's configured index";
  r.releases[Platform::kLinuxX86_64] = {R("2.10.0", "12.8"), R("2.11.0", "13.0"), R("2.12.1", "13.0"),
                                        R("2.13.0", "13.0"), R("2.14.1", "13.0"), R("2.15.0", "13.2")};
  return r;
}

std::vector<std::string> series_of(const MatrixSpec& spec) {
  std::vector<std::string> out;
  for (const auto& t : spec.torch) out.push_back(t.value.str());
  return out;
}

TEST(TorchWindow, ARangeIsEverySeriesTheIndexHasFromItsFloorOn) {
  MatrixSpec spec = parse_matrix(
      "versions: [\"2.8.3\"]\ntorch: [\"2.9\", \">=2.12\"]\ncuda: [\"13.0\"]\n"
      "python: [cp312]\n",
      "m.yaml");
  TorchResolution r = pypi();
  r.named = {"2.9"};
  apply_releases(spec, r);
  EXPECT_THAT(series_of(spec), ElementsAre("2.9", "2.12", "2.13", "2.14", "2.15"));
  ASSERT_EQ(r.ranges.size(), 1U);
  EXPECT_EQ(r.ranges[0].first, ">=2.12");
  EXPECT_THAT(r.ranges[0].second, ElementsAre("2.12", "2.13", "2.14", "2.15"));
  EXPECT_EQ(spec.torch[1].where.line, 2);  // at the range, for errors and the plan
  // What pip installs beats the built-in table: 2.15's build on this index is cu132.
  EXPECT_EQ(spec.compat.pypi_cuda(V("2.15")), V("13.2"));
  EXPECT_EQ(spec.compat.pypi_cuda(V("2.12")), V("13.0"));
}

TEST(TorchWindow, ARangeWithABoundStopsBeforeItAndASeriesItHoldsIsNamedOnce) {
  MatrixSpec spec = parse_matrix(
      "versions: [\"2.8.3\"]\ntorch: [\"2.12\", \">=2.11,<2.14\"]\ncuda: [\"13.0\"]\n"
      "python: [cp312]\n",
      "m.yaml");
  TorchResolution r = pypi();
  r.named = {"2.12"};
  apply_releases(spec, r);
  EXPECT_THAT(series_of(spec), ElementsAre("2.12", "2.11", "2.13"));
  ASSERT_EQ(r.ranges.size(), 1U);
  EXPECT_EQ(r.ranges[0].first, ">=2.11,<2.14");
  EXPECT_THAT(r.ranges[0].second, ElementsAre("2.11", "2.12", "2.13"));
}

TEST(TorchWindow, ARangeThatHoldsNoReleaseIsAWarningNamingTheNewest) {
  MatrixSpec spec = parse_matrix(
      "versions: [\"2.8.3\"]\ntorch: [\"2.12\", \">=2.99\"]\ncuda: [\"13.0\"]\npython: [cp312]\n", "m.yaml");
  TorchResolution r = pypi();
  r.named = {"2.12"};
  apply_releases(spec, r);
  EXPECT_THAT(series_of(spec), ElementsAre("2.12"));
  EXPECT_THAT(empty_ranges(r), ElementsAre("torch \">=2.99\" holds no torch release pip's configured index has (its "
                                           "newest is 2.15.0): it adds no cells until one is published"));
  EXPECT_TRUE(empty_ranges(pypi()).empty());
}

TEST(TorchWindow, ARangeTheIndexCannotAnswerIsAnErrorAtTheRange) {
  MatrixSpec spec =
      parse_matrix("versions: [\"2.8.3\"]\ntorch: [\">=2.12\"]\ncuda: [\"13.0\"]\npython: [cp312]\n", "m.yaml");
  TorchResolution r;
  r.asked = true;
  r.index = "pip's configured index";
  r.failed = "pip index versions torch: exit 1 (Could not fetch URL)";
  try {
    apply_releases(spec, r);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), 2);
    EXPECT_THAT(e.what(), HasSubstr("m.yaml:2:9: torch \">=2.12\" is resolved against the torch index (pip's "
                                    "configured index), which could not be asked: pip index versions torch"));
    EXPECT_THAT(e.hint(), HasSubstr("name the series instead"));
  }
}

Cell stable_cell(const char* torch, const char* torch_cuda) {
  auto preset = std::make_shared<PackagePreset>(*find_preset("flash-attn"));
  preset->abi3 = "cp310";
  auto stable = std::make_shared<PackagePreset::StableAbi>();
  stable->floor = V("2.10");
  stable->from = V("2.10");
  preset->stable = stable;
  Cell cell;
  cell.package = preset;
  cell.torch = V(torch);
  cell.cuda.toolkit = V("13.0");
  cell.torch_cuda = V(torch_cuda);
  cell.stable_floor = V("2.10");
  return cell;
}

TEST(TorchWindow, AStableCellIsVerifiedUnderEachReleaseOfItsWindowOfItsCudaMajor) {
  TorchResolution r = pypi();
  r.windows = {TorchRange{V("2.10"), std::nullopt}};
  // 2.10 is a CUDA 12 build here: not this wheel's; 2.15's cu132 is CUDA 13 like cu130.
  EXPECT_EQ(describe_releases(sweep_of(stable_cell("2.11", "13.0"), r)),
            "2.11.0 (cu130), 2.12.1 (cu130), 2.13.0 (cu130), 2.14.1 (cu130), 2.15.0 (cu132)");
  // A window with a bound: the series below it.
  r.windows = {TorchRange{V("2.10"), V("2.14")}};
  EXPECT_EQ(describe_releases(sweep_of(stable_cell("2.11", "13.0"), r)),
            "2.11.0 (cu130), 2.12.1 (cu130), 2.13.0 (cu130)");
  // Series the matrix names, without a range: those alone (and the one it is built against).
  r.windows.clear();
  r.named = {"2.11", "2.13"};
  EXPECT_EQ(describe_releases(sweep_of(stable_cell("2.11", "13.0"), r)), "2.11.0 (cu130), 2.13.0 (cu130)");
  // An index that could not be asked: the torch it is built against only.
  TorchResolution failed;
  failed.asked = true;
  failed.failed = "no network";
  EXPECT_EQ(describe_releases(sweep_of(stable_cell("2.11", "13.0"), failed)), "2.11 (cu130)");
  // A cell of one torch series has no sweep.
  Cell series = stable_cell("2.11", "13.0");
  series.stable_floor.reset();
  EXPECT_TRUE(sweep_of(series, pypi()).empty());
}

// --verify-torch on a wheel of one Python: each release is checked with that Python, whichever
// the index was asked with (a cp312 wheel cannot load under a cp311 interpreter); an abi3 wheel
// with the one the release was found for where that is newer.
TEST(TorchWindow, AWheelOfOnePythonIsVerifiedWithItsOwnPython) {
  TorchResolution r = pypi();                                                     // found with cp310
  r.releases[Platform::kLinuxX86_64].back().python = *PythonTag::parse("cp313");  // 2.15: no cp310 wheel
  Cell series = stable_cell("2.11", "13.0");
  series.stable_floor.reset();
  series.package = std::make_shared<PackagePreset>(*find_preset("flash-attn"));  // not abi3
  series.python = *PythonTag::parse("cp312");
  std::vector<std::string> missing;
  const std::vector<TorchRelease> checked = releases_for(series, r, {"2.12", "2.15"}, missing);
  ASSERT_EQ(checked.size(), 2U);
  EXPECT_EQ(checked[0].python.str(), "cp312");
  EXPECT_EQ(checked[1].python.str(), "cp312");
  EXPECT_TRUE(missing.empty());
  Cell abi3 = stable_cell("2.11", "13.0");
  abi3.python = *PythonTag::parse("cp311");
  const std::vector<TorchRelease> swept = releases_for(abi3, r, {"2.12", "2.15"}, missing);
  ASSERT_EQ(swept.size(), 2U);
  EXPECT_EQ(swept[0].python.str(), "cp311");
  EXPECT_EQ(swept[1].python.str(), "cp313");
}

TEST(TorchWindow, APyTorchStyleIndexVerifiesUnderTheWheelsOwnCudaBuildFirst) {
  TorchResolution r;
  r.asked = true;
  r.windows = {TorchRange{V("2.10"), std::nullopt}};
  r.releases[Platform::kLinuxX86_64] = {R("2.12.0", "12.6", "cu126"), R("2.12.0", "13.0", "cu130"),
                                        R("2.12.0", "13.2", "cu132"), R("2.13.0", "13.2", "cu132")};
  EXPECT_EQ(describe_releases(sweep_of(stable_cell("2.12", "13.0"), r)), "2.12.0 (cu130), 2.13.0 (cu132)");
}

// Plays the interpreter whose pip asks (provision/py/torch_releases.py): lists the releases it has
// for the request's Python, and answers every build with `build_of`.
class FakeIndex : public CommandRunner {
 public:
  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>&,
                    std::chrono::milliseconds) override {
    CommandResult r;
    if (argv.at(3) == "config") return r;  // pip config list: nothing configured
    const nlohmann::json request = nlohmann::json::parse(argv.at(4));
    const std::string python = request["python_version"];
    asked.push_back(argv.at(3) + " " + python);
    nlohmann::json sources = nlohmann::json::array();
    for (const auto& s : request["sources"]) {
      nlohmann::json answer = {{"tag", s["tag"]}, {"versions", listed[python]}};
      for (const auto& v : s.value("versions", nlohmann::json::array()))
        answer["builds"][v.get<std::string>()] = "13.0";
      sources.push_back(answer);
    }
    r.output = nlohmann::json{{"sources", sources}}.dump();
    return r;
  }
  std::map<std::string, std::vector<std::string>> listed;  // by Python: "3.10"
  std::vector<std::string> asked;
};

TEST(TorchWindow, AReleaseWithNoWheelForTheOldestPythonIsFoundWithTheNewest) {
  test::ScratchDir dir{"fabuild-torch-window"};
  System system = testing::fake_system(dir.path());
  auto index = std::make_shared<FakeIndex>();
  index->listed["3.10"] = {"2.12.0", "2.11.0"};
  index->listed["3.13"] = {"2.13.0", "2.12.0", "2.11.0"};  // 2.13 dropped Python 3.10
  system.commands = index;
  MatrixSpec spec = parse_matrix(
      "versions: [\"2.8.3\"]\ntorch: [\">=2.11\"]\ncuda: [\"13.0\"]\npython: [cp310, cp311, cp313]\n", "m.yaml");
  const TorchResolution r = resolve_torch(spec, system);
  ASSERT_EQ(r.failed, "");
  EXPECT_THAT(series_of(spec), ElementsAre("2.11", "2.12", "2.13"));
  // The oldest and the newest Python are asked, not each one between.
  EXPECT_THAT(index->asked, ElementsAre("list 3.10", "builds 3.10", "list 3.13", "builds 3.13"));
  EXPECT_THAT(r.releases.at(Platform::kLinuxX86_64),
              ElementsAre(R("2.11.0", "13.0"), R("2.12.0", "13.0"), R("2.13.0", "13.0", "", "cp313")));
  // A stable cell built with 3.10 is checked under 2.13 with 3.13, under the others with its own.
  Cell cell = stable_cell("2.11", "13.0");
  cell.python = *PythonTag::parse("cp310");
  EXPECT_EQ(describe_releases(sweep_of(cell, r), cell.python),
            "2.11.0 (cu130), 2.12.0 (cu130), 2.13.0 (cu130, with cp313)");
  // Built with 3.11 (the matrix has no 3.10): 2.11 and 2.12, found with 3.10, are checked with 3.11.
  cell.python = *PythonTag::parse("cp311");
  const std::vector<TorchRelease> sweep = sweep_of(cell, r);
  ASSERT_EQ(sweep.size(), 3U);
  EXPECT_EQ(sweep[0].python.str(), "cp311");
  EXPECT_EQ(sweep[2].python.str(), "cp313");
}

}  // namespace
}  // namespace fabuild
