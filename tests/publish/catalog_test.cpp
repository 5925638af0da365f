#include "publish/catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "support.h"
#include "util/error.h"
#include "util/hash.h"
#include "wheel/build_record.h"
#include "wheel/manifest.h"

#include <nlohmann/json.hpp>

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using ::testing::HasSubstr;

TEST(Catalog, ReadsEachWheelAndWritesItsMetadataBesideIt) {
  ScratchDir dir("fabuild-catalog");
  const fs::path house = dir.path();
  const std::string rel = test::file_test_wheel(house, "cp312");
  const Catalog c = catalog_wheelhouse(house);
  ASSERT_EQ(c.wheels.size(), 1u);
  EXPECT_TRUE(c.left_out.empty());
  const CatalogWheel& w = c.wheels[0];
  EXPECT_EQ(w.path, rel);
  EXPECT_EQ(w.project, "flash-attn");
  EXPECT_EQ(w.variant, "cu128/torch2.8");
  EXPECT_EQ(w.dir(), "fa2.8.3/torch2.8/cu128");
  EXPECT_EQ(w.sha256, hex(sha256_of_file(house / rel).value()));
  EXPECT_EQ(w.size, fs::file_size(house / rel));
  const std::string metadata = ScratchDir::read(house / (rel + ".metadata"));
  EXPECT_THAT(metadata, HasSubstr("Name: flash_attn\nVersion: 2.8.3+cu128torch2.8cxx11abiTRUE"));
  EXPECT_THAT(metadata, HasSubstr("Long description."));  // byte for byte, body included
  EXPECT_EQ(w.metadata_sha256, hex(sha256_of(metadata)));
}

TEST(Catalog, RequiresPythonComesFromMetadata) {
  ScratchDir dir("fabuild-catalog");
  test::file_wheel_requiring(dir.path(), ">=3.9,<3.14");
  const Catalog c = catalog_wheelhouse(dir.path());
  ASSERT_EQ(c.wheels.size(), 1u);
  EXPECT_EQ(c.wheels[0].requires_python, ">=3.9,<3.14");
}

TEST(Catalog, AWheelOutsideTheLayoutHasNoVariant) {
  ScratchDir dir("fabuild-catalog");
  test::file_test_wheel(dir.path(), "cp312", "extra");
  const Catalog c = catalog_wheelhouse(dir.path());
  ASSERT_EQ(c.wheels.size(), 1u);
  EXPECT_EQ(c.wheels[0].variant, "");
  EXPECT_EQ(variant_of_dir("fa2.8.3/torch2.8/rocm6.2"), "rocm6.2/torch2.8");
  EXPECT_EQ(variant_of_dir("fa2.8.3/torchX/cu128"), "");
  EXPECT_EQ(variant_of_dir("fa2.8.3/torch2.8/gpu"), "");
}

// A profile's and a variant's wheels (matrix/axes.h's declared axes) share one directory below
// the CUDA tag, their own index; a library's build type joins its profile the same way.
TEST(Catalog, AProfileWithAVariantAndADebugLibraryAreTheirOwnDirectories) {
  EXPECT_EQ(variant_of_dir("fa2.8.3/torch2.8/cu128/lineinfo"), "cu128/torch2.8/lineinfo");
  EXPECT_EQ(variant_of_dir("fa2.8.3/torch2.8/cu128/minimal-lineinfo"), "cu128/torch2.8/minimal-lineinfo");
  EXPECT_EQ(variant_of_dir("fa2.8.3/torch2.8/cu128/minimal-"), "");
  EXPECT_EQ(variant_of_dir("fa2.8.3/torch2.8/cu128/minimal/lineinfo"), "");
  EXPECT_TRUE(is_library_dir("fa3.0.0/lib/cu130/minimal-debug"));
  EXPECT_TRUE(is_library_dir("fa3.0.0/lib/cu130/minimal-lineinfo-relwithdebinfo"));
  EXPECT_FALSE(is_library_dir("fa3.0.0/lib/cu130/Minimal"));
}

// A stable-ABI wheel (docs/stable-abi.md) sits in its window's directory and is listed in the
// variant of every torch its manifest entry proves it under, up to the first that failed.
TEST(Catalog, AStableAbiWheelIsInTheVariantOfEachTorchItIsProvenUnder) {
  ScratchDir dir("fabuild-catalog");
  test::TestWheel w;
  w.version = w.metadata_version = "2.8.4+cu130torch2.10andhigher";
  w.tag = "cp310-abi3-linux_x86_64";
  const std::string sub = "fa2.8.4/torch2.10andhigher/cu130";
  fs::create_directories(dir.path() / sub);
  const fs::path wheel = w.write(dir.path() / sub);
  FiledWheel entry;
  entry.wheel = sub + "/" + w.file_name();
  entry.sha256 = hex(sha256_of_file(wheel).value());
  entry.size = fs::file_size(wheel);
  entry.stable_floor = "2.10";
  entry.torch_proofs = {{"2.11", "2.11.0+cu130", "13.0", true, "loads", ""},
                        {"2.12", "2.12.1+cu130", "13.0", true, "loads", ""},
                        {"2.15", "2.15.0+cu132", "13.2", true, "loads", ""},
                        {"2.16", "2.16.0+cu132", "13.2", false, "undefined symbol: x", ""},
                        {"2.17", "2.17.0+cu132", "13.2", true, "loads", ""}};
  const Catalog c = catalog_wheelhouse(dir.path(), {{"fa2.8.4-torch2.10andhigher-cu130-abi3-linux_x86_64", entry}});
  ASSERT_EQ(c.wheels.size(), 1u) << (c.left_out.empty() ? "" : c.left_out[0]);
  EXPECT_EQ(c.wheels[0].variant, "cu130/torch2.10andhigher");
  // 2.15 is a cu132 torch: listed for its own CUDA tag too; 2.17 comes after a failure.
  EXPECT_THAT(c.wheels[0].proven_variants,
              ::testing::ElementsAre("cu130/torch2.11", "cu130/torch2.12", "cu130/torch2.15", "cu132/torch2.15"));
  EXPECT_EQ(variant_of_dir("fa2.8.4/torch2.10andhigher/cu130/minimal"), "cu130/torch2.10andhigher/minimal");
  EXPECT_EQ(variant_of_dir("fa2.8.4/torchandhigher/cu130"), "");
}

// A SHA256SUMS line that disagrees with a wheel its manifest entry vouches for is the sums file's
// fault: the wheel is published, the line written again from the manifest, and said so.
TEST(Catalog, ASha256SumsLineThatDisagreesWithTheManifestAndTheWheelIsRepaired) {
  ScratchDir dir("fabuild-catalog");
  const std::string rel = test::file_test_wheel(dir.path(), "cp312");
  FiledWheel entry;
  entry.wheel = rel;
  entry.sha256 = hex(sha256_of_file(dir.path() / rel).value());
  entry.size = fs::file_size(dir.path() / rel);
  const fs::path sums = dir.path() / fs::path(rel).parent_path() / "SHA256SUMS";
  const std::string name = fs::path(rel).filename().string();
  std::ofstream(sums) << std::string(64, 'f') << "  " << name << "\n";
  const Catalog c = catalog_wheelhouse(dir.path(), {{"fa2.8.3-torch2.8-cu128-cp312-linux_x86_64", entry}});
  ASSERT_EQ(c.wheels.size(), 1u) << (c.left_out.empty() ? "" : c.left_out[0]);
  ASSERT_EQ(c.repaired.size(), 1u);
  EXPECT_THAT(c.repaired[0], HasSubstr("SHA256SUMS: its line for " + name + " said ffff"));
  EXPECT_THAT(c.repaired[0], HasSubstr("the wheel and manifest.json agree on " + entry.sha256 + ": rewritten"));
  EXPECT_EQ(ScratchDir::read(sums), entry.sha256 + "  " + name + "\n");
  // Without a manifest entry that vouches for it, the wheel is the suspect: left out, as before.
  std::ofstream(sums) << std::string(64, 'f') << "  " << name << "\n";
  EXPECT_EQ(catalog_wheelhouse(dir.path(), {}).wheels.size(), 0u);
}

// A SHA256SUMS that is gone from beside a wheel its manifest entry vouches for is written again;
// a directory in its place is no file of fabuild's to replace or remove: the catalog stops
// (UserError) naming it and what to do, and leaves it.
TEST(Catalog, AMissingSha256SumsIsWrittenAgainAndADirectoryInItsPlaceIsNamed) {
  ScratchDir dir("fabuild-catalog");
  const std::string rel = test::file_test_wheel(dir.path(), "cp312");
  FiledWheel entry;
  entry.wheel = rel;
  entry.sha256 = hex(sha256_of_file(dir.path() / rel).value());
  entry.size = fs::file_size(dir.path() / rel);
  const std::map<std::string, FiledWheel> manifest = {{"fa2.8.3-torch2.8-cu128-cp312-linux_x86_64", entry}};
  const fs::path sums = dir.path() / fs::path(rel).parent_path() / "SHA256SUMS";
  const std::string name = fs::path(rel).filename().string();
  fs::remove(sums);
  const Catalog c = catalog_wheelhouse(dir.path(), manifest);
  ASSERT_EQ(c.wheels.size(), 1u) << (c.left_out.empty() ? "" : c.left_out[0]);
  ASSERT_EQ(c.repaired.size(), 1u);
  EXPECT_THAT(c.repaired[0], HasSubstr("SHA256SUMS: it was missing; manifest.json vouches for " + name + ": written"));
  EXPECT_EQ(ScratchDir::read(sums), entry.sha256 + "  " + name + "\n");

  fs::remove(sums);
  fs::create_directory(sums);
  try {
    (void)catalog_wheelhouse(dir.path(), manifest);
    ADD_FAILURE() << "a directory in place of SHA256SUMS was catalogued";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), sums.string() + ": SHA256SUMS is a directory, not the list of sums fabuild writes there");
    EXPECT_THAT(e.hint(), HasSubstr("remove it"));
  }
  EXPECT_TRUE(fs::is_directory(sums));
}

// A wheel whose manifest entry carries a build record gets it beside it, in SHA256SUMS; the record
// goes when the entry no longer has one (or the wheel is gone), and its line with it.
TEST(Catalog, WritesEachWheelsBuildRecordBesideItAndListsItInTheSums) {
  ScratchDir dir("fabuild-catalog");
  const std::string rel = test::file_test_wheel(dir.path(), "cp312");
  FiledWheel entry;
  entry.wheel = rel;
  entry.sha256 = hex(sha256_of_file(dir.path() / rel).value());
  entry.size = fs::file_size(dir.path() / rel);
  entry.versions = {{"nvcc", "13.0"}, {"torch", "2.11.0+cu130"}};
  entry.build = R"({"source": {"kind": "git", "commit": "abc"}, "fabuild": {"version": "0.1.0"}})";
  const std::string id = "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64";
  const Catalog c = catalog_wheelhouse(dir.path(), {{id, entry}});
  ASSERT_EQ(c.wheels.size(), 1u) << (c.left_out.empty() ? "" : c.left_out[0]);
  EXPECT_TRUE(c.wheels[0].build_record);
  const fs::path record = dir.path() / (rel + kBuildRecordSuffix);
  const std::string text = ScratchDir::read(record);
  EXPECT_EQ(text, build_record_text(id, entry));
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["file"]["sha256"], entry.sha256);
  EXPECT_EQ(doc["source"]["commit"], "abc");
  EXPECT_EQ(doc["toolchain"]["torch"], "2.11.0+cu130");
  const fs::path sums = dir.path() / fs::path(rel).parent_path() / "SHA256SUMS";
  EXPECT_THAT(ScratchDir::read(sums), HasSubstr(hex(sha256_of(text)) + "  " + record.filename().string()));
  // Changed by hand: written again from the manifest.
  std::ofstream(record) << "{}";
  catalog_wheelhouse(dir.path(), {{id, entry}});
  EXPECT_EQ(ScratchDir::read(record), text);
  // An entry without one: the record and its line go.
  entry.build.clear();
  EXPECT_FALSE(catalog_wheelhouse(dir.path(), {{id, entry}}).wheels[0].build_record);
  EXPECT_FALSE(fs::exists(record));
  EXPECT_THAT(ScratchDir::read(sums), ::testing::Not(HasSubstr(kBuildRecordSuffix)));
}

TEST(BuildRecord, NamesAndAnEntryWithoutOne) {
  EXPECT_TRUE(is_build_record_name("a-1-cp312-cp312-linux_x86_64.whl.build.json"));
  EXPECT_TRUE(is_build_record_name("lib.tar.gz.build.json"));
  EXPECT_FALSE(is_build_record_name(".build.json"));
  EXPECT_FALSE(is_build_record_name("x.json"));
  EXPECT_EQ(build_record_text("c", FiledWheel{}), "");
}

TEST(Catalog, LeavesOutWheelsThatCannotBePublishedAndSaysWhy) {
  ScratchDir dir("fabuild-catalog");
  const fs::path house = dir.path();
  test::file_test_wheel(house, "cp312");
  fs::create_directories(house / "fa2.8.3/torch2.8/cu128");
  std::ofstream(house / "fa2.8.3/torch2.8/cu128/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl") << "not a zip";
  test::TestWheel other;
  other.tag = "cp310-cp310-linux_x86_64";
  other.metadata_name = "flash_attention_fork";
  other.write(house / "fa2.8.3/torch2.8/cu128");
  std::ofstream(house / "fa2.8.3/torch2.8/cu128/not-a-wheel-name.whl") << "x";

  const Catalog c = catalog_wheelhouse(house);
  EXPECT_EQ(c.wheels.size(), 1u);
  ASSERT_EQ(c.left_out.size(), 3u);
  const std::string all = c.left_out[0] + "\n" + c.left_out[1] + "\n" + c.left_out[2];
  EXPECT_THAT(all, HasSubstr("cp311-cp311-linux_x86_64.whl: cannot open it as a zip archive"));
  EXPECT_THAT(all,
              HasSubstr("METADATA names the project \"flash_attention_fork\" but the file name says \"flash_attn\""));
  EXPECT_THAT(all, HasSubstr("not-a-wheel-name.whl"));
  EXPECT_FALSE(fs::exists(house / "fa2.8.3/torch2.8/cu128/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl.metadata"));
}

// FlashAttention's own release: METADATA says 2.8.3, the file name adds the label. Published,
// and marked, so that the page gives the install that works (by URL); another version in the
// file name than METADATA's is still refused.
TEST(Catalog, ALabelInTheFileNameOnlyIsPublishedAndMarked) {
  ScratchDir dir("fabuild-catalog");
  const fs::path house = dir.path();
  test::TestWheel upstream;
  upstream.version = "2.8.3+cu12torch2.8cxx11abiTRUE";
  upstream.metadata_version = "2.8.3";
  fs::create_directories(house / "fa2.8.3/torch2.8/cu128");
  upstream.write(house / "fa2.8.3/torch2.8/cu128");
  test::TestWheel renamed;
  renamed.tag = "cp311-cp311-linux_x86_64";
  renamed.version = "2.8.4+cu12torch2.8cxx11abiTRUE";
  renamed.metadata_version = "2.8.3";
  renamed.write(house / "fa2.8.3/torch2.8/cu128");
  const Catalog c = catalog_wheelhouse(house);
  ASSERT_EQ(c.wheels.size(), 1u);
  EXPECT_TRUE(c.wheels[0].label_in_file_only);
  ASSERT_EQ(c.left_out.size(), 1u);
  EXPECT_THAT(c.left_out[0], HasSubstr("METADATA says version 2.8.3 but the file name says 2.8.4+"));
  // Read from the catalog's cache the second time: still marked.
  const Catalog again = catalog_wheelhouse(house);
  ASSERT_EQ(again.wheels.size(), 1u);
  EXPECT_TRUE(again.wheels[0].label_in_file_only);
}

TEST(Catalog, SkipsStagingLogsAndTheIndexesItself) {
  ScratchDir dir("fabuild-catalog");
  for (const char* d : {".staging/cell", "logs", "simple", "cu128/torch2.8/simple"})
    test::file_test_wheel(dir.path(), "cp312", d);
  EXPECT_TRUE(catalog_wheelhouse(dir.path()).wheels.empty());
}

TEST(Catalog, RemovesTheMetadataOfAWheelThatIsGone) {
  ScratchDir dir("fabuild-catalog");
  const std::string rel = test::file_test_wheel(dir.path(), "cp312");
  catalog_wheelhouse(dir.path());
  ASSERT_TRUE(fs::exists(dir.path() / (rel + ".metadata")));
  fs::remove(dir.path() / rel);
  EXPECT_TRUE(catalog_wheelhouse(dir.path()).wheels.empty());
  EXPECT_FALSE(fs::exists(dir.path() / (rel + ".metadata")));
}

TEST(Catalog, ReadsAChangedWheelAgainButNotAnUnchangedOne) {
  ScratchDir dir("fabuild-catalog");
  const std::string rel = test::file_test_wheel(dir.path(), "cp312");
  const std::string first = catalog_wheelhouse(dir.path()).wheels.at(0).sha256;
  EXPECT_TRUE(fs::exists(dir.path() / kCatalogCacheName));
  // Unchanged: the cache answers, even when the .metadata is what a reader would notice gone.
  EXPECT_EQ(catalog_wheelhouse(dir.path()).wheels.at(0).sha256, first);
  // Changed: a different build under the same name is read again.
  test::TestWheel w;
  w.files["flash_attn/__init__.py"] = "__version__ = \"2.8.3\"  # rebuilt\n";
  w.write(dir.path() / "fa2.8.3/torch2.8/cu128");
  const std::string second = catalog_wheelhouse(dir.path()).wheels.at(0).sha256;
  EXPECT_NE(second, first);
  EXPECT_EQ(second, hex(sha256_of_file(dir.path() / rel).value()));
  // A damaged cache is only slower.
  std::ofstream(dir.path() / kCatalogCacheName) << "{ not json";
  EXPECT_EQ(catalog_wheelhouse(dir.path()).wheels.at(0).sha256, second);
}

TEST(Catalog, AMissingWheelhouseIsAConfigurationError) {
  ScratchDir dir("fabuild-catalog");
  try {
    catalog_wheelhouse(dir.path() / "nope");
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), kExitBadConfig);
    EXPECT_THAT(e.message(), HasSubstr("does not exist"));
    EXPECT_THAT(e.where().str(), HasSubstr("nope"));
  }
}

}  // namespace
}  // namespace fabuild
