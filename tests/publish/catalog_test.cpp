#include "publish/catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.h"
#include "util/error.h"
#include "util/hash.h"

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
  EXPECT_EQ(w.sha256, hex(sha256_of_file(house / rel)));
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
  EXPECT_EQ(second, hex(sha256_of_file(dir.path() / rel)));
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
