// Merging partial wheelhouses, on wheelhouses filed the way builds file them (file_wheel,
// record_filed) with real zip wheels.

#include "wheel/merge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "util/error.h"
#include "util/hash.h"
#include "wheel/manifest.h"
#include "wheel/wheelhouse.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const std::string kDir = "fa2.8.3/torch2.8/cu128";

std::string cell_id(const std::string& python) { return "fa2.8.3-torch2.8-cu128-" + python + "-linux_x86_64"; }

std::string wheel_name(const std::string& python) {
  return "flash_attn-2.8.3+cu128torch2.8cxx11abiTRUE-" + python + "-" + python + "-linux_x86_64.whl";
}

std::string wheel_rel(const std::string& python) { return kDir + "/" + wheel_name(python); }

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A partial wheelhouse as a CI job leaves it: wheels filed with SHA256SUMS, the manifest, logs.
class Part {
 public:
  explicit Part(fs::path root) : root_(std::move(root)) { fs::create_directories(root_); }

  // Files `python`'s cell; `flavour` changes the wheel's bytes (another build of the same cell).
  Part& cell(const std::string& python, const std::string& flavour = "a") {
    test::TestWheel w;
    w.tag = python + "-" + python + "-linux_x86_64";
    w.files["flash_attn/build_flavour.txt"] = flavour;
    const fs::path staged = w.write(make_staging());
    const FiledFile filed = file_wheel(staged, root_ / kDir).value();
    FiledWheel entry;
    entry.wheel = wheel_rel(python);
    entry.sha256 = filed.sha256;
    entry.size = filed.size;
    entry.build_seconds = 61.5;
    entry.versions = {{"python", python}, {"torch", "2.8.0"}};
    EXPECT_TRUE(record_filed(root_, cell_id(python), entry));
    write(root_ / "logs" / (cell_id(python) + ".log"), "build log of " + python + " " + flavour + "\n");
    return *this;
  }

  // Files a library cell's archive (artifact: library) as its build does: beside SHA256SUMS,
  // under "library" in the manifest.
  Part& library(const std::string& id, const std::string& rel) {
    const fs::path staged = make_staging() / fs::path(rel).filename();
    write(staged, "a library archive of " + id);
    const FiledFile filed = file_wheel(staged, (root_ / rel).parent_path()).value();
    FiledWheel entry;
    entry.wheel = rel;
    entry.library = true;
    entry.sha256 = filed.sha256;
    entry.size = filed.size;
    EXPECT_TRUE(record_filed(root_, id, entry));
    return *this;
  }

  [[nodiscard]] const fs::path& root() const { return root_; }
  [[nodiscard]] std::string name() const { return root_.string(); }

 private:
  fs::path make_staging() {
    const fs::path staging = root_ / ".staging" / std::to_string(counter_++);
    fs::create_directories(staging);
    return staging;
  }
  fs::path root_;
  int counter_ = 0;
};

std::string sha_of(const fs::path& file) { return hex(sha256_of_file(file).value()); }

// Every regular file under `root` with its digest: what "the same wheelhouse" means here.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> files;
  if (!fs::exists(root)) return files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) files[e.path().lexically_relative(root).generic_string()] = sha_of(e.path());
  }
  return files;
}

nlohmann::json manifest_of(const fs::path& root) {
  std::ifstream in(root / kManifestName);
  return nlohmann::json::parse(in);
}

std::vector<fs::path> paths(std::initializer_list<const Part*> parts) {
  std::vector<fs::path> out;
  for (const Part* p : parts) out.push_back(p->root());
  return out;
}

class Merge : public ::testing::Test {
 protected:
  ScratchDir scratch_{"merge"};
  fs::path out_ = scratch_.path() / "out";
  Part a_{scratch_.path() / "part-a"};
  Part b_{scratch_.path() / "part-b"};
};

TEST_F(Merge, DisjointPartsGiveEveryWheelWithOneSha256SumsAndOneManifest) {
  a_.cell("cp311");
  b_.cell("cp312").cell("cp313");
  const MergePlan plan = plan_merge(paths({&a_, &b_}), out_);
  ASSERT_FALSE(plan.refused());
  const MergeResult r = apply_merge(plan).value();
  EXPECT_EQ(r.wheels_copied, 3u);
  EXPECT_EQ(r.cells_added, 3u);
  EXPECT_EQ(r.logs_copied, 3u);
  EXPECT_EQ(r.sums_written, 1u);

  for (const char* py : {"cp311", "cp312", "cp313"}) {
    const Part& from = std::string(py) == "cp311" ? a_ : b_;
    EXPECT_EQ(sha_of(out_ / wheel_rel(py)), sha_of(from.root() / wheel_rel(py))) << py;
  }
  // SHA256SUMS lists all three, as file_wheel would have written it for one build.
  std::string expected;
  for (const char* py : {"cp311", "cp312", "cp313"})
    expected += sha_of(out_ / wheel_rel(py)) + "  " + wheel_name(py) + "\n";
  EXPECT_EQ(ScratchDir::read(out_ / kDir / "SHA256SUMS"), expected);
  // Each manifest entry as its part wrote it.
  const auto merged = manifest_of(out_)["cells"];
  EXPECT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[cell_id("cp311")], manifest_of(a_.root())["cells"][cell_id("cp311")]);
  EXPECT_EQ(merged[cell_id("cp313")], manifest_of(b_.root())["cells"][cell_id("cp313")]);
  EXPECT_EQ(ScratchDir::read(out_ / "logs" / (cell_id("cp312") + ".log")), "build log of cp312 a\n");
  // Nothing temporary is left, and nothing from .staging came along.
  for (const auto& [rel, sha] : tree(out_)) EXPECT_EQ(rel.find("/."), std::string::npos) << rel;
  EXPECT_FALSE(fs::exists(out_ / ".staging"));
}

TEST_F(Merge, LibraryArchivesAreMergedLikeWheels) {
  const std::string lib = "fa3.0.0/lib/cu130/minimal/flash_attn_3-3.0.0-lib-cu130-minimal-linux_x86_64.tar.gz";
  a_.cell("cp311");
  b_.library("fa3.0.0-lib-cu130-linux_x86_64-minimal", lib);
  const MergePlan plan = plan_merge(paths({&a_, &b_}), out_);
  ASSERT_FALSE(plan.refused());
  EXPECT_THAT(plan.left_out, IsEmpty());
  const MergeResult r = apply_merge(plan).value();
  EXPECT_EQ(r.wheels_copied, 2u);
  EXPECT_EQ(sha_of(out_ / lib), sha_of(b_.root() / lib));
  EXPECT_EQ(read_sha256sums(out_ / "fa3.0.0/lib/cu130/minimal" / kSha256SumsName).value().size(), 1u);
  const auto entry = manifest_of(out_)["cells"]["fa3.0.0-lib-cu130-linux_x86_64-minimal"];
  EXPECT_EQ(entry["library"], lib);
  // A damaged archive in a part is refused as a damaged wheel is.
  write(b_.root() / lib, "changed on the way");
  EXPECT_TRUE(plan_merge(paths({&a_, &b_}), scratch_.path() / "out2").refused());
}

TEST_F(Merge, AConflictingDuplicateIsRefusedWithBothPartsAndDigestsAndNothingIsWritten) {
  a_.cell("cp311").cell("cp312");
  b_.cell("cp312", "rebuilt differently").cell("cp313");
  const MergePlan plan = plan_merge(paths({&a_, &b_}), out_);
  ASSERT_TRUE(plan.refused());
  ASSERT_EQ(plan.conflicts.size(), 2u);  // the file, and the cell's manifest entry
  const MergeConflict& file = plan.conflicts[0];
  EXPECT_EQ(file.what, wheel_rel("cp312"));
  EXPECT_EQ(file.first, a_.name());
  EXPECT_EQ(file.first_sha256, sha_of(a_.root() / wheel_rel("cp312")));
  EXPECT_EQ(file.second, b_.name());
  EXPECT_EQ(file.second_sha256, sha_of(b_.root() / wheel_rel("cp312")));
  EXPECT_NE(file.first_sha256, file.second_sha256);
  EXPECT_EQ(plan.conflicts[1].what, "cell " + cell_id("cp312"));
  EXPECT_FALSE(fs::exists(out_));
  EXPECT_THROW(static_cast<void>(apply_merge(plan)), std::logic_error);
  EXPECT_FALSE(fs::exists(out_));
}

TEST_F(Merge, AConflictWithWhatTheOutputHoldsIsRefusedAndTheOutputStaysAsItWas) {
  Part existing(out_);
  existing.cell("cp312", "last night");
  const auto before = tree(out_);
  a_.cell("cp311").cell("cp312", "tonight");
  const MergePlan plan = plan_merge(paths({&a_}), out_);
  ASSERT_TRUE(plan.refused());
  ASSERT_EQ(plan.conflicts.size(), 2u);
  EXPECT_EQ(plan.conflicts[0].first, out_.string() + " (already there)");
  EXPECT_EQ(plan.conflicts[0].first_sha256, sha_of(out_ / wheel_rel("cp312")));
  EXPECT_EQ(plan.conflicts[0].second, a_.name());
  EXPECT_EQ(tree(out_), before);  // the cp311 wheel, which does not conflict, is not copied either
}

TEST_F(Merge, AnIdenticalDuplicateIsTakenOnce) {
  a_.cell("cp311").cell("cp312");
  b_.cell("cp313");
  // The same job's artifact twice (a re-run uploading again), byte for byte.
  const fs::path again = scratch_.path() / "part-a-again";
  fs::copy(a_.root(), again, fs::copy_options::recursive);
  const MergePlan plan = plan_merge({a_.root(), again, b_.root()}, out_);
  ASSERT_FALSE(plan.refused()) << plan.conflicts.size();
  EXPECT_EQ(plan.wheels.size(), 3u);
  EXPECT_EQ(plan.cells.size(), 3u);
  EXPECT_THAT(plan.duplicates, UnorderedElementsAre(HasSubstr(wheel_rel("cp311") + ": identical in"),
                                                    HasSubstr(wheel_rel("cp312") + ": identical in"),
                                                    HasSubstr("cell " + cell_id("cp311") + ": the same wheel in"),
                                                    HasSubstr("cell " + cell_id("cp312") + ": the same wheel in")));
  const MergeResult r = apply_merge(plan).value();
  EXPECT_EQ(r.wheels_copied, 3u);
  EXPECT_EQ(r.cells_added, 3u);
  EXPECT_EQ(r.logs_copied, 3u);  // identical logs are taken once too
  EXPECT_EQ(manifest_of(out_)["cells"].size(), 3u);
}

// CI checks a stable-ABI wheel under each torch release in a job of its own (docs/stable-abi.md):
// the parts file the same wheel, each with its own proofs; the merged entry holds them all, and
// merging a later verify job's part into that output adds its proof to the entry there.
TEST_F(Merge, TheProofsOfOneWheelFromSeveralPartsAreGathered) {
  a_.cell("cp312");
  const fs::path b = scratch_.path() / "verify-2.13";
  const fs::path c = scratch_.path() / "verify-2.15";
  fs::copy(a_.root(), b, fs::copy_options::recursive);
  fs::copy(a_.root(), c, fs::copy_options::recursive);
  const auto with_proof = [](const fs::path& root, FiledWheel::TorchProof proof) {
    FiledWheel e = *find_filed(root, cell_id("cp312"));
    e.torch_proofs.push_back(std::move(proof));
    EXPECT_TRUE(record_filed(root, cell_id("cp312"), e));
  };
  with_proof(a_.root(), {"2.11", "2.11.0+cu130", "13.0", true, "loads", ""});
  with_proof(b, {"2.13", "2.13.0+cu130", "13.0", true, "loads", ""});
  with_proof(c, {"2.15", "2.15.0+cu132", "13.2", false, "undefined symbol: x", ""});
  MergePlan plan = plan_merge({c, a_.root(), b}, out_);
  ASSERT_FALSE(plan.refused());
  ASSERT_TRUE(apply_merge(plan));
  const auto merged = find_filed(out_, cell_id("cp312"));
  ASSERT_TRUE(merged.has_value());
  ASSERT_EQ(merged->torch_proofs.size(), 3u);
  EXPECT_EQ(merged->torch_proofs[0].series, "2.11");  // oldest first, whichever part came first
  EXPECT_EQ(merged->torch_proofs[2].series, "2.15");
  EXPECT_FALSE(merged->torch_proofs[2].ok);
  // A later part with one more proof of the same wheel: the output's entry gains it.
  const fs::path d = scratch_.path() / "verify-2.14";
  fs::copy(a_.root(), d, fs::copy_options::recursive);
  FiledWheel e = *find_filed(d, cell_id("cp312"));
  e.torch_proofs = {{"2.14", "2.14.1+cu130", "13.0", true, "loads", ""}};
  EXPECT_TRUE(record_filed(d, cell_id("cp312"), e));
  plan = plan_merge({d}, out_);
  ASSERT_FALSE(plan.refused());
  ASSERT_TRUE(apply_merge(plan));
  EXPECT_EQ(find_filed(out_, cell_id("cp312"))->torch_proofs.size(), 4u);
  // Merging the same again changes nothing.
  plan = plan_merge({d}, out_);
  ASSERT_EQ(plan.cells.size(), 1u);
  EXPECT_TRUE(plan.cells[0].present);
}

TEST_F(Merge, MergingAgainChangesNothingAndAddingAPartAddsOnlyItsCells) {
  a_.cell("cp311");
  b_.cell("cp312");
  ASSERT_TRUE(apply_merge(plan_merge(paths({&a_, &b_}), out_)));
  const auto first = tree(out_);
  const auto mtime = fs::last_write_time(out_ / kManifestName);

  const MergePlan again = plan_merge(paths({&a_, &b_}), out_);
  ASSERT_FALSE(again.refused());
  const MergeResult r = apply_merge(again).value();
  EXPECT_EQ(r.wheels_copied + r.cells_added + r.logs_copied + r.sums_written, 0u);
  EXPECT_EQ(tree(out_), first);
  EXPECT_EQ(fs::last_write_time(out_ / kManifestName), mtime);

  Part c(scratch_.path() / "part-c");
  c.cell("cp313");
  const MergeResult more = apply_merge(plan_merge(paths({&c}), out_)).value();
  EXPECT_EQ(more.wheels_copied, 1u);
  EXPECT_EQ(more.cells_added, 1u);
  EXPECT_EQ(manifest_of(out_)["cells"].size(), 3u);
  EXPECT_EQ(ScratchDir::read(out_ / kDir / "SHA256SUMS").size(), 3 * (64 + 2 + wheel_name("cp311").size() + 1));
}

TEST_F(Merge, DifferentLogsOfOneNameAreKeptSideBySide) {
  a_.cell("cp311");
  b_.cell("cp312");
  write(a_.root() / "logs/env-cp311-torch2.8-cu128.log", "made on runner a\n");
  write(b_.root() / "logs/env-cp311-torch2.8-cu128.log", "made on runner b\n");
  const MergePlan plan = plan_merge(paths({&a_, &b_}), out_);
  ASSERT_FALSE(plan.refused());
  ASSERT_TRUE(apply_merge(plan));
  EXPECT_EQ(ScratchDir::read(out_ / "logs/env-cp311-torch2.8-cu128.log"), "made on runner a\n");
  EXPECT_EQ(ScratchDir::read(out_ / "logs/env-cp311-torch2.8-cu128.part2.log"), "made on runner b\n");
  // Again: both are there already, nothing new.
  EXPECT_THAT(plan_merge(paths({&a_, &b_}), out_).logs, IsEmpty());
}

TEST_F(Merge, ADamagedPartIsRefused) {
  a_.cell("cp311").cell("cp312");
  b_.cell("cp313");
  // A wheel cut short on its way: neither SHA256SUMS nor the manifest agree with it any more.
  fs::resize_file(a_.root() / wheel_rel("cp312"), 100);
  // A wheel lost on its way.
  fs::remove(b_.root() / wheel_rel("cp313"));
  const MergePlan plan = plan_merge(paths({&a_, &b_}), out_);
  ASSERT_TRUE(plan.refused());
  EXPECT_THAT(plan.conflicts, IsEmpty());
  EXPECT_THAT(
      plan.problems,
      ElementsAre(HasSubstr(a_.name() + ": " + kDir + "/SHA256SUMS lists " + wheel_name("cp312") + " with sha256 "),
                  HasSubstr(a_.name() + ": manifest.json files cell " + cell_id("cp312") + " as " + wheel_rel("cp312") +
                            " with sha256 "),
                  b_.name() + ": " + kDir + "/SHA256SUMS lists " + wheel_name("cp313") + ", which is not there",
                  b_.name() + ": manifest.json files cell " + cell_id("cp313") + " as " + wheel_rel("cp313") +
                      ", which is not there"));
  EXPECT_FALSE(fs::exists(out_));
}

TEST_F(Merge, AnInvalidManifestInAPartIsAProblemNamingIt) {
  a_.cell("cp311");
  write(a_.root() / kManifestName, "{\"cells\": [1, 2]}\n");
  const MergePlan plan = plan_merge(paths({&a_}), out_);
  ASSERT_TRUE(plan.refused());
  EXPECT_THAT(
      plan.problems,
      ElementsAre(HasSubstr("manifest.json: the wheelhouse manifest is not valid: \"cells\" is not an object")));
}

TEST_F(Merge, GeneratedAndHiddenFilesAreLeftOut) {
  a_.cell("cp311");
  write(a_.root() / "index.html", "<html>page</html>");
  write(a_.root() / "report.json", "{}");
  write(a_.root() / "simple/flash-attn/index.html", "<html>index</html>");
  write(a_.root() / (wheel_rel("cp311") + ".metadata"), "Metadata-Version: 2.1\n");
  write(a_.root() / ".index-cache.json", "{}");
  write(a_.root() / kDir / ".flash_attn.whl.tmp.abc123", "half a wheel");
  write(a_.root() / kDir / "notes.txt", "something a command cell left");
  const MergePlan plan = plan_merge(paths({&a_}), out_);
  ASSERT_FALSE(plan.refused());
  EXPECT_EQ(plan.regenerated, 4u);  // index.html, report.json, simple/..., the .metadata file
  EXPECT_THAT(plan.left_out, ElementsAre(a_.name() + "/" + kDir + "/notes.txt: not a wheel"));
  ASSERT_TRUE(apply_merge(plan));
  std::set<std::string> files;
  for (const auto& [rel, sha] : tree(out_)) files.insert(rel);
  EXPECT_EQ(files, (std::set<std::string>{kManifestName, kDir + "/SHA256SUMS", wheel_rel("cp311"),
                                          "logs/" + cell_id("cp311") + ".log"}));
}

TEST_F(Merge, AStaleEntryInTheOutputsManifestIsReplaced) {
  Part existing(out_);
  existing.cell("cp311", "old");
  fs::remove(out_ / wheel_rel("cp311"));  // someone deleted the wheel, not its entry
  EXPECT_TRUE(write_sha256sums(out_ / kDir));
  a_.cell("cp311", "new");
  const MergePlan plan = plan_merge(paths({&a_}), out_);
  ASSERT_FALSE(plan.refused());
  EXPECT_THAT(plan.notes, ElementsAre(HasSubstr("which is not there; the entry from " + a_.name() + " replaces it")));
  ASSERT_TRUE(apply_merge(plan));
  EXPECT_EQ(manifest_of(out_)["cells"][cell_id("cp311")]["sha256"], sha_of(a_.root() / wheel_rel("cp311")));
  EXPECT_EQ(check_filed(out_, *find_filed(out_, cell_id("cp311"))), FiledState::kIntact);
}

TEST_F(Merge, KeysFabuildDoesNotKnowAreKeptInManifestEntries) {
  a_.cell("cp311");
  auto doc = manifest_of(a_.root());
  doc["cells"][cell_id("cp311")]["runner"] = "ci-42";
  write(a_.root() / kManifestName, doc.dump(2));
  ASSERT_TRUE(apply_merge(plan_merge(paths({&a_}), out_)));
  EXPECT_EQ(manifest_of(out_)["cells"][cell_id("cp311")]["runner"], "ci-42");
}

TEST_F(Merge, AFileThatAppearsInTheOutputAfterTheCheckIsNotReplaced) {
  a_.cell("cp311");
  const MergePlan plan = plan_merge(paths({&a_}), out_);
  ASSERT_FALSE(plan.refused());
  write(out_ / wheel_rel("cp311"), "a wheel filed by a build meanwhile");
  const Expected<MergeResult> merged = apply_merge(plan);
  ASSERT_FALSE(merged);
  EXPECT_THAT(merged.error().what, HasSubstr("a different file appeared here during the merge"));
  EXPECT_EQ(ScratchDir::read(out_ / wheel_rel("cp311")), "a wheel filed by a build meanwhile");
}

TEST_F(Merge, AnEmptyPartIsFineAndSaidSo) {
  a_.cell("cp311");
  const fs::path empty = scratch_.path() / "empty";  // a shard with no cell (--allow-empty)
  fs::create_directories(empty);
  const MergePlan plan = plan_merge({a_.root(), empty}, out_);
  ASSERT_FALSE(plan.refused());
  EXPECT_THAT(plan.notes, ElementsAre(empty.string() + " holds no wheel"));
  EXPECT_EQ(apply_merge(plan).value().wheels_copied, 1u);
}

TEST_F(Merge, BadArgumentsAreExit2) {
  try {
    plan_merge({scratch_.path() / "nope"}, out_);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), kExitBadConfig);
    EXPECT_EQ(e.message(), "merge: the part " + (scratch_.path() / "nope").string() + " is not a directory");
  }
  write(scratch_.path() / "file", "x");
  try {
    plan_merge({a_.root()}, scratch_.path() / "file");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), kExitBadConfig);
    EXPECT_THAT(e.message(), HasSubstr("is not a directory"));
  }
}

}  // namespace
}  // namespace fabuild
