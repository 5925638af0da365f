// Journalled filing (wheel/filing.h): a filing interrupted after any of its three steps is
// finished by finish_interrupted_filings, and until then only the journalled cell's wheel may
// disagree with SHA256SUMS and the manifest. Each interruption point is reproduced by doing the
// steps the filing had done before it, with the real functions, then "dying".

#include "wheel/filing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "util/error.h"
#include "util/hash.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;

const std::string kCell = "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64";

class JournalledFiling : public ::testing::Test {
 protected:
  fs::path house() const { return dir.path() / "wh"; }
  fs::path dest() const { return house() / "fa2.8.3/torch2.8/cu128"; }

  // A verified wheel in a staging directory, different bytes for each `variant`.
  fs::path staged(const std::string& variant = "1") {
    test::TestWheel w;
    w.files["flash_attn/__init__.py"] = "# build " + variant + "\n";
    fs::create_directories(dir.path() / "staging");
    return w.write(dir.path() / "staging");
  }

  std::map<std::string, std::string> sums() const {
    std::map<std::string, std::string> out;
    std::ifstream in(dest() / kSha256SumsName);
    for (std::string line; std::getline(in, line);) out[line.substr(66)] = line.substr(0, 64);
    return out;
  }

  // A journal as file_cell_wheel writes it before its first step.
  FiledWheel journal(const fs::path& wheel) {
    FiledWheel e;
    e.wheel = fs::relative(dest() / wheel.filename(), house()).generic_string();
    e.sha256 = hex(sha256_of_file(wheel).value());
    e.size = fs::file_size(wheel);
    e.build_seconds = 12;
    EXPECT_TRUE(record_filed(house() / kFilingJournalDir / kCell, kCell, e));
    return e;
  }

  test::ScratchDir dir{"fabuild-filing"};
};

TEST_F(JournalledFiling, AFilingLeavesWheelSumsAndManifestInAgreementAndNoJournal) {
  const fs::path wheel = staged();
  const std::string digest = hex(sha256_of_file(wheel).value());
  FiledWheel entry;
  entry.build_seconds = 61.5;
  const FiledFile f = file_cell_wheel(house(), kCell, wheel, dest(), entry).value().file;
  EXPECT_EQ(f.sha256, digest);
  EXPECT_FALSE(fs::exists(wheel));
  EXPECT_EQ(sums().at(f.path.filename().string()), digest);
  const auto filed = find_filed(house(), kCell);
  ASSERT_TRUE(filed);
  EXPECT_EQ(filed->wheel, "fa2.8.3/torch2.8/cu128/" + f.path.filename().string());
  EXPECT_EQ(filed->sha256, digest);
  EXPECT_EQ(filed->build_seconds, 61.5);
  EXPECT_TRUE(pending_filings(house()).empty());
  EXPECT_FALSE(fs::exists(house() / kFilingJournalDir / kCell));
  EXPECT_FALSE(fs::exists(house() / kFilingJournalDir)) << "an empty journal directory stays behind";
}

// A filing that fails before its wheel moved (here: its directory is a file) leaves no journal,
// empty or whole, behind: nothing of it is to be finished.
TEST_F(JournalledFiling, AFilingThatFailsBeforeTheMoveLeavesNoJournal) {
  const fs::path wheel = staged();
  fs::create_directories(dest().parent_path());
  std::ofstream(dest()) << "not a directory";
  EXPECT_FALSE(file_cell_wheel(house(), kCell, wheel, dest(), FiledWheel{}));
  EXPECT_TRUE(fs::exists(wheel));
  EXPECT_FALSE(fs::exists(house() / kFilingJournalDir / kCell));
  EXPECT_FALSE(fs::exists(house() / kFilingJournalDir));
}

TEST_F(JournalledFiling, KilledAfterTheJournalBeforeTheMoveChangesNothing) {
  const fs::path wheel = staged();
  journal(wheel);
  EXPECT_EQ(pending_filings(house()), std::vector<std::string>{kCell});
  EXPECT_TRUE(finish_interrupted_filings(house()).value().empty());
  EXPECT_FALSE(find_filed(house(), kCell));
  EXPECT_FALSE(fs::exists(dest()));
  EXPECT_TRUE(pending_filings(house()).empty());
}

TEST_F(JournalledFiling, KilledAfterTheMoveBeforeSha256SumsIsFinished) {
  const fs::path wheel = staged();
  const FiledWheel e = journal(wheel);
  fs::create_directories(dest());
  fs::rename(wheel, dest() / wheel.filename());  // the move, and then the process died
  EXPECT_TRUE(sums().empty());
  EXPECT_EQ(finish_interrupted_filings(house()).value(), std::vector<std::string>{kCell});
  EXPECT_EQ(sums().at(wheel.filename().string()), e.sha256);
  EXPECT_EQ(find_filed(house(), kCell), e);
  EXPECT_TRUE(pending_filings(house()).empty());
}

TEST_F(JournalledFiling, KilledAfterReplacingAWheelBeforeSha256SumsGetsTheNewDigest) {
  FiledWheel old_entry;
  const FiledFile old = file_cell_wheel(house(), kCell, staged("old"), dest(), old_entry).value().file;
  const fs::path wheel = staged("new");  // same name, other bytes: a --force rebuild
  const FiledWheel e = journal(wheel);
  ASSERT_NE(e.sha256, old.sha256);
  fs::rename(wheel, dest() / wheel.filename());
  EXPECT_EQ(sums().at(wheel.filename().string()), old.sha256) << "the window the journal covers";
  EXPECT_TRUE(finish_interrupted_filings(house()));
  EXPECT_EQ(sums().at(wheel.filename().string()), e.sha256);
  EXPECT_EQ(find_filed(house(), kCell)->sha256, e.sha256);
}

TEST_F(JournalledFiling, KilledAfterTheManifestBeforeTheJournalWentIsHarmlessToFinish) {
  const fs::path wheel = staged();
  FiledWheel entry;
  const FiledFile f = file_cell_wheel(house(), kCell, wheel, dest(), entry).value().file;
  const FiledWheel e = *find_filed(house(), kCell);
  EXPECT_TRUE(
      record_filed(house() / kFilingJournalDir / kCell, kCell, e));  // as if the journal's removal never happened
  EXPECT_EQ(finish_interrupted_filings(house()).value(), std::vector<std::string>{kCell});
  EXPECT_EQ(sums().at(f.path.filename().string()), f.sha256);
  EXPECT_EQ(find_filed(house(), kCell), e);
}

TEST_F(JournalledFiling, AJournalNeverWrittenWholeIsDropped) {
  fs::create_directories(house() / kFilingJournalDir / kCell);
  std::ofstream(house() / kFilingJournalDir / kCell / kManifestName) << "{\"cells\": {\"" << kCell << "\": {\"whe";
  EXPECT_TRUE(finish_interrupted_filings(house()).value().empty());
  EXPECT_TRUE(pending_filings(house()).empty());
  EXPECT_FALSE(fs::exists(house() / kManifestName));
}

TEST_F(JournalledFiling, ACellIdThatWouldLeaveTheJournalIsRefused) {
  FiledWheel entry;
  EXPECT_THROW(static_cast<void>(file_cell_wheel(house(), "../../etc", staged(), dest(), entry)), UserError);
  EXPECT_THROW(static_cast<void>(file_cell_wheel(house(), ".hidden", staged(), dest(), entry)), UserError);
}

}  // namespace
}  // namespace fabuild
