#include "wheel/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "../support/scratch_dir.h"
#include "util/error.h"
#include "util/hash.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kCell312 = "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64";
const std::string kCell311 = "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

FiledWheel entry(const std::string& python, const std::string& sha = std::string(64, 'a')) {
  FiledWheel e;
  e.wheel = "fa2.8.3/torch2.8/cu128/flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-" + python + "-" + python +
            "-linux_x86_64.whl";
  e.sha256 = sha;
  e.size = 123456789;
  e.build_seconds = 612.5;
  e.versions = {{"nvcc", "12.8.93"}, {"compiler", "gcc 12.2.0"}, {"python", "3.12.7"}, {"torch", "2.8.0+cu128"}};
  return e;
}

class Manifest : public ::testing::Test {
 protected:
  test::ScratchDir house_{"manifest"};
  fs::path manifest_ = house_.path() / "manifest.json";
};

TEST_F(Manifest, NoManifestMeansNothingFiled) { EXPECT_EQ(find_filed(house_.path(), kCell312), std::nullopt); }

TEST_F(Manifest, RecordsTheDocumentedShape) {
  EXPECT_TRUE(record_filed(house_.path(), kCell312, entry("cp312")));
  const auto doc = nlohmann::json::parse(read(manifest_));
  const auto& cell = doc.at("cells").at(kCell312);
  EXPECT_EQ(cell.at("wheel"), entry("cp312").wheel);
  EXPECT_EQ(cell.at("size"), 123456789);
  EXPECT_EQ(cell.at("build_seconds"), 612.5);
  EXPECT_EQ(cell.at("versions").at("nvcc"), "12.8.93");
  EXPECT_EQ(find_filed(house_.path(), kCell312), entry("cp312"));
}

TEST_F(Manifest, AContainerCellRecordsItsImage) {
  FiledWheel e = entry("cp312");
  e.image = "pytorch/manylinux2_28-builder:cuda12.8";
  e.image_id = "sha256:" + std::string(64, 'b');
  e.image_digest = "pytorch/manylinux2_28-builder@sha256:" + std::string(64, 'c');
  EXPECT_TRUE(record_filed(house_.path(), kCell312, e));
  const auto doc = nlohmann::json::parse(read(manifest_));
  const auto& image = doc.at("cells").at(kCell312).at("image");
  EXPECT_EQ(image.at("name"), e.image);
  EXPECT_EQ(image.at("id"), e.image_id);
  EXPECT_EQ(image.at("digest"), e.image_digest);
  EXPECT_EQ(find_filed(house_.path(), kCell312), e);
  // A host cell has no image key at all.
  EXPECT_TRUE(record_filed(house_.path(), kCell311, entry("cp311")));
  EXPECT_FALSE(nlohmann::json::parse(read(manifest_)).at("cells").at(kCell311).contains("image"));

  std::ofstream(manifest_) << R"({"cells": {")" << kCell312
                           << R"(": {"wheel": "x.whl", "sha256": "a", "size": 1, "image": {"name": "x"}}}})";
  try {
    find_filed(house_.path(), kCell312);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.message(), HasSubstr(".image is missing or not an object with a name and an id"));
  }
}

TEST_F(Manifest, WhatAWheelNeedsOfTheSystemRoundTripsAndIsUnknownInOlderManifests) {
  FiledWheel e = entry("cp312");
  e.needs = {{"glibc", "2.28"}, {"glibcxx", "3.4.21"}};
  EXPECT_TRUE(record_filed(house_.path(), kCell312, e));
  EXPECT_TRUE(record_filed(house_.path(), kCell311, entry("cp311")));  // a win_amd64 wheel's: nothing to record
  const auto cells = nlohmann::json::parse(read(manifest_)).at("cells");
  EXPECT_EQ(cells.at(kCell312).at("needs"), (nlohmann::json{{"glibc", "2.28"}, {"glibcxx", "3.4.21"}}));
  EXPECT_FALSE(cells.at(kCell311).contains("needs"));
  EXPECT_EQ(find_filed(house_.path(), kCell312), e);
  EXPECT_TRUE(find_filed(house_.path(), kCell311)->needs.empty());

  // Written before fabuild recorded it: read, with the needs unknown.
  std::ofstream(manifest_) << R"({"cells": {")" << kCell312 << R"(": {"wheel": "x.whl", "sha256": "a", "size": 1}}})";
  EXPECT_TRUE(find_filed(house_.path(), kCell312)->needs.empty());
  std::ofstream(manifest_) << R"({"cells": {")" << kCell312
                           << R"(": {"wheel": "x.whl", "sha256": "a", "size": 1, "needs": {"glibc": 2.28}}}})";
  try {
    find_filed(house_.path(), kCell312);
    FAIL();
  } catch (const UserError& error) {
    EXPECT_THAT(error.message(), HasSubstr(".needs.glibc is missing or not a string"));
  }
}

TEST_F(Manifest, AStableAbiWheelsProofsRoundTripAndEndItsRangeAtAFailure) {
  FiledWheel e = entry("cp312");
  e.stable_floor = "2.10";
  e.torch_proofs = {{"2.11", "2.11.0+cu130", "13.0", true, "loads (torch.ops.load_library)", "16 cases"},
                    {"2.13", "2.13.0+cu130", "13.0", false, "undefined symbol: aoti_torch_new", ""},
                    {"2.14", "2.14.1+cu130", "13.0", true, "loads", ""}};
  EXPECT_TRUE(record_filed(house_.path(), kCell312, e));
  EXPECT_EQ(find_filed(house_.path(), kCell312), e);
  EXPECT_THAT(proven_series(e), ::testing::ElementsAre("2.11"));
  const auto doc = nlohmann::json::parse(read(manifest_));
  EXPECT_EQ(doc.at("cells").at(kCell312).at("torch_proofs").at(1).at("ok"), false);
  EXPECT_FALSE(doc.at("cells").at(kCell312).at("torch_proofs").at(1).contains("gpu"));  // not run there
}

TEST_F(Manifest, ASecondCellIsAddedAndARerunReplacesOnlyItsOwnEntry) {
  std::ofstream(manifest_) << R"({"cells": {}, "note": "kept by hand"})";
  EXPECT_TRUE(record_filed(house_.path(), kCell312, entry("cp312")));
  EXPECT_TRUE(record_filed(house_.path(), kCell311, entry("cp311")));
  EXPECT_TRUE(record_filed(house_.path(), kCell312, entry("cp312", std::string(64, 'b'))));

  EXPECT_EQ(find_filed(house_.path(), kCell311), entry("cp311"));
  EXPECT_EQ(find_filed(house_.path(), kCell312), entry("cp312", std::string(64, 'b')));
  EXPECT_EQ(nlohmann::json::parse(read(manifest_)).at("note"), "kept by hand");
  for (const auto& e : fs::directory_iterator(house_.path())) {
    EXPECT_EQ(e.path().filename(), "manifest.json") << "left behind: " << e.path();
  }
}

TEST_F(Manifest, ACorruptManifestIsAnErrorWithItsPositionAndIsKept) {
  const std::string corrupt = "{\"cells\": {\n  \"a\": {\"wheel\": \"x.whl\",,}\n}}\n";
  std::ofstream(manifest_) << corrupt;
  const Expected<void> recorded = record_filed(house_.path(), kCell312, entry("cp312"));
  ASSERT_FALSE(recorded) << "a corrupt manifest was overwritten";
  EXPECT_THAT(recorded.error().what, HasSubstr(manifest_.string() + ":2:"));  // the file, the line, the column
  EXPECT_THAT(recorded.error().what, HasSubstr("manifest is not valid"));
  EXPECT_THAT(recorded.error().hint, HasSubstr("repair it or move it aside"));
  EXPECT_EQ(read(manifest_), corrupt);
  EXPECT_THROW(find_filed(house_.path(), kCell312), UserError);
}

TEST_F(Manifest, AManifestOfTheWrongShapeIsAnError) {
  std::ofstream(manifest_) << R"({"cells": []})";
  EXPECT_FALSE(record_filed(house_.path(), kCell312, entry("cp312")));
  std::ofstream(manifest_) << R"({"cells": {")" << kCell312 << R"(": {"wheel": "x.whl", "sha256": 5, "size": 1}}})";
  try {
    find_filed(house_.path(), kCell312);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.message(), HasSubstr("cells.\"" + kCell312 + "\".sha256"));
  }
}

TEST_F(Manifest, AnEntryPointingOutsideTheWheelhouseIsNotTrusted) {
  std::ofstream(manifest_) << R"({"cells": {"c": {"wheel": "../../etc/passwd", "sha256": "x", "size": 1}}})";
  EXPECT_THROW(find_filed(house_.path(), "c"), UserError);
}

TEST_F(Manifest, ConcurrentCellsKeepEachOthersEntries) {
  std::vector<std::thread> cells;
  for (int i = 0; i < 16; ++i) {
    cells.emplace_back(
        [this, i] { EXPECT_TRUE(record_filed(house_.path(), "cell" + std::to_string(i), entry("cp312"))); });
  }
  for (auto& t : cells) t.join();
  EXPECT_EQ(nlohmann::json::parse(read(manifest_)).at("cells").size(), 16u);
}

TEST_F(Manifest, ARerunCanTellAnIntactWheelFromAChangedOrMissingOne) {
  FiledWheel e = entry("cp312");
  const fs::path wheel = house_.path() / e.wheel;
  fs::create_directories(wheel.parent_path());
  std::ofstream(wheel, std::ios::binary) << "wheel bytes";
  e.sha256 = hex(sha256_of("wheel bytes"));
  e.size = 11;
  EXPECT_EQ(check_filed(house_.path(), e), FiledState::kIntact);
  std::ofstream(wheel, std::ios::binary) << "wheel bytez";  // same size, other bytes
  EXPECT_EQ(check_filed(house_.path(), e), FiledState::kChanged);
  fs::remove(wheel);
  EXPECT_EQ(check_filed(house_.path(), e), FiledState::kMissing);
}

}  // namespace
}  // namespace fabuild
