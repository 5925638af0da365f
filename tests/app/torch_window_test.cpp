// What the torch index has, applied to a matrix (app/torch_window.h): ranges become the series
// the index has, its CUDA builds replace the built-in table's, and a stable-ABI cell is verified
// under every release of its window of its CUDA major.

#include "app/torch_window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "matrix/expand.h"
#include "matrix/loader.h"
#include "util/error.h"

namespace fabuild {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Version V(const char* s) { return *Version::parse(s); }
TorchRelease R(const char* version, const char* cuda, std::string tag = "") { return {V(version), V(cuda), tag}; }

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

TEST(TorchWindow, APyTorchStyleIndexVerifiesUnderTheWheelsOwnCudaBuildFirst) {
  TorchResolution r;
  r.asked = true;
  r.windows = {TorchRange{V("2.10"), std::nullopt}};
  r.releases[Platform::kLinuxX86_64] = {R("2.12.0", "12.6", "cu126"), R("2.12.0", "13.0", "cu130"),
                                        R("2.12.0", "13.2", "cu132"), R("2.13.0", "13.2", "cu132")};
  EXPECT_EQ(describe_releases(sweep_of(stable_cell("2.12", "13.0"), r)), "2.12.0 (cu130), 2.13.0 (cu132)");
}

}  // namespace
}  // namespace fabuild
