#include "wheel/wheelhouse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "../support/scratch_dir.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/hash.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

const std::string kCp311 = "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp311-cp311-linux_x86_64.whl";
const std::string kCp312 = "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path stage(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
  return dir / name;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

class Filing : public ::testing::Test {
 protected:
  test::ScratchDir scratch_{"wheelhouse"};
  fs::path staging_ = scratch_.path() / ".staging";
  fs::path dest_ = scratch_.path() / "wheelhouse/fa2.8.3/torch2.8/cu128";
};

TEST_F(Filing, MovesTheWheelInAndListsEveryWheelInSha256Sums) {
  const FiledFile a = file_wheel(stage(staging_, kCp312, "wheel-312"), dest_).value();
  EXPECT_TRUE(file_wheel(stage(staging_, kCp311, "wheel-311"), dest_));
  stage(dest_, "build.log", "not a wheel");

  EXPECT_EQ(a.path, dest_ / kCp312);
  EXPECT_EQ(a.sha256, hex(sha256_of("wheel-312")));
  EXPECT_EQ(a.size, 9u);
  EXPECT_EQ(read(dest_ / kCp312), "wheel-312");
  EXPECT_FALSE(fs::exists(staging_ / kCp312));
  // Sorted by name, two spaces, exactly what `sha256sum -c SHA256SUMS` reads.
  EXPECT_EQ(read(dest_ / "SHA256SUMS"),
            hex(sha256_of("wheel-311")) + "  " + kCp311 + "\n" + hex(sha256_of("wheel-312")) + "  " + kCp312 + "\n");
}

// A directory where SHA256SUMS goes is not fabuild's to replace or remove: filing there fails
// naming it and what to do, the wheel is not moved, the directory stays.
TEST_F(Filing, ADirectoryInPlaceOfSha256SumsIsAFailureThatNamesIt) {
  fs::create_directories(dest_ / "SHA256SUMS");
  const fs::path staged = stage(staging_, kCp312, "wheel-312");
  const Expected<FiledFile> filed = file_wheel(staged, dest_);
  ASSERT_FALSE(filed);
  EXPECT_EQ(filed.error().what,
            (dest_ / "SHA256SUMS").string() + ": SHA256SUMS is a directory, not the list of sums fabuild writes there");
  EXPECT_THAT(filed.error().hint, ::testing::StartsWith("remove it: fabuild writes SHA256SUMS again"));
  EXPECT_TRUE(fs::is_directory(dest_ / "SHA256SUMS"));
  EXPECT_TRUE(fs::exists(staged)) << "moved in, the wheel would be listed nowhere";
  EXPECT_FALSE(fs::exists(dest_ / kCp312));
  EXPECT_FALSE(read_sha256sums(dest_ / "SHA256SUMS"));
  EXPECT_FALSE(write_sha256sums(dest_));
  EXPECT_TRUE(read_sha256sums(dest_ / "none").value().empty()) << "a missing file lists nothing";
}

TEST_F(Filing, CopyLeavesTheStagedWheelInPlace) {
  const fs::path staged = stage(staging_, kCp312, "wheel-312");
  EXPECT_TRUE(file_wheel(staged, dest_, Transfer::kCopy));
  EXPECT_EQ(read(staged), "wheel-312");
  EXPECT_EQ(read(dest_ / kCp312), "wheel-312");
}

class FilingOver : public Filing, public ::testing::WithParamInterface<Transfer> {};

TEST_P(FilingOver, ADifferentExistingWheelIsReplacedWholeWithNoTemporaryLeftBehind) {
  stage(dest_, kCp312, "old wheel bytes");
  EXPECT_TRUE(file_wheel(stage(staging_, kCp312, "old wheel bytes"), dest_));  // its SHA256SUMS line too
  // A reader (pip, an HTTP server) that has the old wheel open keeps reading all of the old
  // bytes: the new one arrives as a new file renamed over the name, not written into the old.
  std::ifstream reader(dest_ / kCp312, std::ios::binary);

  EXPECT_TRUE(file_wheel(stage(staging_, kCp312, "new"), dest_, GetParam()));

  std::ostringstream old_bytes;
  old_bytes << reader.rdbuf();
  EXPECT_EQ(old_bytes.str(), "old wheel bytes");
  EXPECT_EQ(read(dest_ / kCp312), "new");
  EXPECT_EQ(read(dest_ / "SHA256SUMS"), hex(sha256_of("new")) + "  " + kCp312 + "\n");
  EXPECT_THAT(names_in(dest_), UnorderedElementsAre(kCp312, "SHA256SUMS"));
}

INSTANTIATE_TEST_SUITE_P(MoveAndCopy, FilingOver, ::testing::Values(Transfer::kMove, Transfer::kCopy));

TEST_F(Filing, AMissingStagedWheelIsAnErrorThatNamesIt) {
  const Expected<FiledFile> filed = file_wheel(staging_ / kCp312, dest_);
  ASSERT_FALSE(filed) << "filing a missing wheel succeeded";
  EXPECT_THAT(filed.error().what, ::testing::StartsWith((staging_ / kCp312).string() + ": "));
}

TEST_F(Filing, AnUncommittedAtomicFileLeavesNothingUnderEitherName) {
  fs::create_directories(dest_);
  {
    AtomicFile half(dest_ / kCp312);
    half.write("the first half of a wheel");
    EXPECT_TRUE(fs::exists(half.temp_path()));
    EXPECT_EQ(half.temp_path().parent_path(), dest_);  // same directory: the rename is atomic
  }                                                    // a run that throws or is cancelled between write and commit
  EXPECT_TRUE(names_in(dest_).empty());
}

TEST_F(Filing, AnAtomicFileThatCannotBeMadeIsAFailureNamingItsPlace) {
  const Expected<AtomicFile> none = AtomicFile::create(dest_ / "missing" / kCp312);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().what, ::testing::HasSubstr((dest_ / "missing").string()));
  fs::create_directories(dest_);
  Expected<AtomicFile> made = AtomicFile::create(dest_ / kCp312);
  ASSERT_TRUE(made) << made.error().what;
  AtomicFile moved = std::move(*made);  // the temporary file is the moved-to object's, once
  ASSERT_TRUE(moved.try_write("a whole wheel"));
  ASSERT_TRUE(moved.try_commit());
  EXPECT_EQ(read(dest_ / kCp312), "a whole wheel");
  EXPECT_THAT(names_in(dest_), UnorderedElementsAre(kCp312));
}

TEST_F(Filing, ConcurrentCellsFilingIntoOneDirectoryAllLandInSha256Sums) {
  std::vector<std::thread> cells;
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) {
    names.push_back("flash_attn-2.8.3-cp3" + std::to_string(i) + "-cp3" + std::to_string(i) + "-linux_x86_64.whl");
    const fs::path staged = stage(staging_ / std::to_string(i), names.back(), "wheel " + std::to_string(i));
    cells.emplace_back([staged, this] { EXPECT_TRUE(file_wheel(staged, dest_)); });
  }
  for (auto& t : cells) t.join();
  std::string expected;
  std::sort(names.begin(), names.end());
  for (const auto& n : names) expected += hex(sha256_of(read(dest_ / n))) + "  " + n + "\n";
  EXPECT_EQ(read(dest_ / "SHA256SUMS"), expected);
}

TEST_F(Filing, FilingWaitsWhileAnotherCellHoldsTheDirectory) {
  // Deterministic form of the race above: while another filer holds the directory, this one
  // must not touch SHA256SUMS (else one of two concurrent rewrites loses a line).
  fs::create_directories(dest_);
  const fs::path staged = stage(staging_, kCp312, "wheel-312");
  std::optional<DirLock> other(std::in_place, dest_);
  std::thread cell([&] { EXPECT_TRUE(file_wheel(staged, dest_)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(fs::exists(dest_ / "SHA256SUMS"));
  other.reset();
  cell.join();
  EXPECT_EQ(read(dest_ / "SHA256SUMS"), hex(sha256_of("wheel-312")) + "  " + kCp312 + "\n");
}

TEST_F(Filing, RewritingSha256SumsDropsGoneWheelsAndFixesStaleLines) {
  stage(dest_, kCp312, "wheel-312");
  stage(dest_, "SHA256SUMS", std::string(64, '0') + "  " + kCp312 + "\n" + std::string(64, '1') + "  gone.whl\n");
  EXPECT_TRUE(write_sha256sums(dest_));
  EXPECT_EQ(read(dest_ / "SHA256SUMS"), hex(sha256_of("wheel-312")) + "  " + kCp312 + "\n");
  EXPECT_THAT(names_in(dest_), UnorderedElementsAre(kCp312, "SHA256SUMS"));
}

}  // namespace
}  // namespace fabuild
