// Whether a cell need not be built (app/filed_check.h): its manifest entry, the patches it was
// built with, the wheel on disk (gone, changed, no longer verifying, intact) and the stamps
// that spare a re-run reading an unchanged wheel again.

#include "app/filed_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "../support/fake_files.h"
#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "util/hash.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class FiledCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    MatrixSpec spec = parse_matrix(
        "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\nprovision: host\n", "m.yaml");
    spec.torch_index = "https://torch-index.invalid/whl";
    cells_ = std::make_shared<const std::vector<Cell>>(expand(spec).cells);
    ASSERT_EQ(cells_->size(), 1u);
    planned_ = std::make_unique<PlannedCell>(PlannedCell{cells_, cells_->at(0), {}, cells_->at(0).id(), {}, {}});
  }

  // The cell's wheel filed in the wheelhouse, and its manifest entry (as read from disk).
  std::map<std::string, FiledWheel> filed(const test::TestWheel& w = {}) {
    const fs::path dir = house() / "fa2.8.3/torch2.8/cu128";
    fs::create_directories(dir);
    const fs::path wheel = w.write(dir);
    FiledWheel entry;
    entry.wheel = fs::relative(wheel, house()).generic_string();
    entry.sha256 = hex(sha256_of_file(wheel).value());
    entry.size = fs::file_size(wheel);
    return {{planned_->id, entry}};
  }

  std::optional<CellOutcome> check(const std::map<std::string, FiledWheel>& manifest) {
    VerifiedStamps stamps(*files_, house());
    auto out = filed_and_intact(*planned_, house().string(), manifest, stamps, notes_);
    EXPECT_TRUE(stamps.save());
    return out;
  }

  fs::path house() const { return dir_.path() / "wh"; }

  test::ScratchDir dir_{"filed-check"};
  std::shared_ptr<Files> files_ = std::make_shared<RealFiles>();  // what the stamps are read, told and written with
  std::shared_ptr<const std::vector<Cell>> cells_;
  std::unique_ptr<PlannedCell> planned_;
  std::vector<std::string> notes_;
};

TEST_F(FiledCheck, ACellWithoutAnEntryIsBuiltWithoutANote) {
  EXPECT_FALSE(check({}));
  EXPECT_TRUE(notes_.empty());
}

TEST_F(FiledCheck, AnIntactWheelThatVerifiesIsUpToDateAndStamped) {
  const auto manifest = filed();
  const auto out = check(manifest);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->result, CellResult::kUpToDate);
  EXPECT_EQ(out->output_dir, (house() / "fa2.8.3/torch2.8/cu128").string());
  EXPECT_TRUE(notes_.empty());
  EXPECT_TRUE(fs::exists(house() / ".verified.json")) << "a re-run need not verify it again";
  EXPECT_TRUE(check(manifest));
}

TEST_F(FiledCheck, AGoneWheelIsBuiltAgainWithANote) {
  const auto manifest = filed();
  fs::remove(house() / manifest.begin()->second.wheel);
  EXPECT_FALSE(check(manifest));
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_THAT(notes_[0], HasSubstr("building again: its filed wheel"));
  EXPECT_THAT(notes_[0], HasSubstr("is gone"));
}

TEST_F(FiledCheck, AWheelChangedSinceItWasFiledIsBuiltAgain) {
  const auto manifest = filed();
  std::ofstream(house() / manifest.begin()->second.wheel, std::ios::app) << "tampered";
  EXPECT_FALSE(check(manifest));
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_THAT(notes_[0], HasSubstr("changed since it was filed"));
}

TEST_F(FiledCheck, AnIntactWheelThatNoLongerVerifiesIsBuiltAgain) {
  test::TestWheel other;
  other.tag = "cp311-cp311-linux_x86_64";  // another Python's wheel under this cell's entry
  EXPECT_FALSE(check(filed(other)));
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_THAT(notes_[0], HasSubstr("no longer verifies"));
  EXPECT_FALSE(fs::exists(house() / kVerifiedStampsName)) << "not stamped";
}

TEST_F(FiledCheck, ChangedPatchesOrALibraryEntryMeanBuildingAgain) {
  auto manifest = filed();
  manifest.begin()->second.patches = {{"fix.patch", std::string(64, 'a')}};
  EXPECT_FALSE(check(manifest));
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_THAT(notes_[0], HasSubstr("its patches changed"));
  manifest.begin()->second.patches.clear();
  manifest.begin()->second.library = true;
  EXPECT_FALSE(check(manifest)) << "a library filed under a wheel cell's id is not its wheel";
}

// The stamps through fake files (System::files: read, each wheel's identity, written back); the
// wheel layer's own reads (check_filed, verify_wheel) go to the disk, where this test has no wheel.
TEST_F(FiledCheck, AStampedWheelThatIsStillTheSameFileIsUpToDateWithoutBeingRead) {
  const auto fake = std::make_shared<test::FakeFiles>();
  files_ = fake;
  FiledWheel entry;
  entry.wheel = "fa2.8.3/torch2.8/cu128/" + test::TestWheel{}.file_name();
  entry.sha256 = std::string(64, 'a');
  entry.size = 5;
  fake->add_file(house() / entry.wheel, "wheel");
  {
    VerifiedStamps stamps(*fake, house());
    stamps.stamp(planned_->id, entry, expectation_for(planned_->cell, required_members(planned_->cell)));
    EXPECT_TRUE(stamps.save());
  }
  ASSERT_TRUE(fake->file(house() / kVerifiedStampsName));
  const std::map<std::string, FiledWheel> manifest{{planned_->id, entry}};
  const auto out = check(manifest);
  ASSERT_TRUE(out) << (notes_.empty() ? "" : notes_[0]);
  EXPECT_EQ(out->result, CellResult::kUpToDate);
  EXPECT_TRUE(notes_.empty());
  EXPECT_FALSE(fs::exists(house())) << "nothing read from or written to the disk";

  fake->add_file(house() / entry.wheel, "wheel");  // written again in place: its times changed
  EXPECT_FALSE(check(manifest)) << "checked in full again";
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_THAT(notes_[0], HasSubstr("building again: its filed wheel"));
}

TEST_F(FiledCheck, AStampForAnotherExpectationDoesNotSpareTheCheck) {
  const auto fake = std::make_shared<test::FakeFiles>();
  files_ = fake;
  FiledWheel entry;
  entry.wheel = "fa2.8.3/torch2.8/cu128/" + test::TestWheel{}.file_name();
  entry.sha256 = std::string(64, 'a');
  fake->add_file(house() / entry.wheel, "wheel");
  WheelExpectation other = expectation_for(planned_->cell, required_members(planned_->cell));
  other.python_tag = other.abi_tag = "cp311";
  {
    VerifiedStamps stamps(*fake, house());
    stamps.stamp(planned_->id, entry, other);
    EXPECT_TRUE(stamps.save());
  }
  EXPECT_FALSE(check({{planned_->id, entry}}));
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_THAT(notes_[0], HasSubstr("building again"));
}

}  // namespace
}  // namespace fabuild
