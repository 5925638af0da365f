// A library cell's run (app/library_steps.h): the recipe fabuild carries, the steps in order, what
// the configure step is told, where the object cache comes in, and the checks of an installed tree.

#include "app/library_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <memory>

#include "../support/scratch_dir.h"
#include "app/library_checks.h"
#include "app/library_recipe.h"
#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<const std::vector<Cell>> library_cells(const std::string& package = "flash-attn-3",
                                                       const std::string& extra = "") {
  return std::make_shared<const std::vector<Cell>>(
      expand(parse_matrix("package: " + package +
                              "\nartifact: library\nversions: [\"3.0.0\"]\ncuda: [\"13.0\"]\n"
                              "profile: [minimal]\nsource: {path: fa}\n" +
                              extra,
                          "m.yaml"))
          .cells);
}

TEST(LibraryRecipe, IsWrittenOnceIntoTheCacheWithItsWholeProject) {
  test::ScratchDir dir("recipe");
  RealFiles files;
  const Expected<fs::path> recipe = install_library_recipe(files, dir.path());
  ASSERT_TRUE(recipe) << recipe.error().what;
  for (const char* file :
       {"CMakeLists.txt", "cmake/flavours.cmake", "cmake/flash_attnConfig.cmake.in", "include/flash_attn/flash_attn.h",
        "src/c_api.cpp", "src/backend_fa2.cpp", "src/backend_fa3.cpp", "src/backend_example.cpp",
        "src/backend_fa3_bwd.cpp", "src/backend_fa2_bwd.cpp", "src/head_groups.cu", "test/test_variants.cpp",
        "shim/c10/cuda/CUDAException.h", "test/varlen_test.cpp", "test/CMakeLists.txt"}) {
    EXPECT_TRUE(fs::is_regular_file(*recipe / file)) << file;
  }
  EXPECT_THAT(recipe->filename().string(), ::testing::StartsWith("flash-attn-lib-"));
  // Named by its content: a second install finds it there and writes nothing.
  const auto written = fs::last_write_time(*recipe / "CMakeLists.txt");
  EXPECT_EQ(*install_library_recipe(files, dir.path()), *recipe);
  EXPECT_EQ(fs::last_write_time(*recipe / "CMakeLists.txt"), written);
}

TEST(LibrarySteps, TheCellConfiguresBuildsChecksPacksAndFilesTheRecipe) {
  const auto cells = library_cells();
  const PlannedCell p{cells, cells->at(0), {}, cells->at(0).id(), {}, {}};
  const SourceSpec source{SourceSpec::Kind::kPath, "fa", "", "", {}};
  const LibraryTools tools{"/cache/recipes/flash-attn-lib-x", "/usr/bin/cmake", "/usr/bin/ninja", "3.25.1"};
  LibraryBuild b;
  b.cell = &p;
  b.source = &source;
  b.prepared = "/src/fa";
  b.tools = &tools;
  b.toolkit.home = "/usr/local/cuda-13.0";
  b.path_tail = "/usr/bin";
  b.wheelhouse = "/house";
  const ObjectCacheSettings cache{true, "/objects", kDefaultCacheBytes, ""};
  const CcWrapper wrapper{"/cache/bin/fabuild-cc-1", "/cache/bin/fabuild-c++-1", "/cache/bin"};
  b.cache = &cache;
  b.wrapper = &wrapper;
  const LibraryRun made = library_cell_run(b);
  const CellRun& run = made.run;
  EXPECT_NE(made.compiles, nullptr) << "its compiles go through the object cache";
  std::vector<std::string> names;
  for (const Step& s : run.steps) names.push_back(s.name);
  EXPECT_THAT(names, ElementsAre("copy", "source-digest", "recipe", "configure", "build", "install", "verify",
                                 "consumer", "consumer-build", "test", "pack", "file"));
  // The recipe is configured from its copy in the staging directory, which fabuild-cc maps out of
  // the objects (nvcc names anonymous namespaces after the file's path).
  const auto step = [&](const std::string& name) -> const Step& {
    return *std::find_if(run.steps.begin(), run.steps.end(), [&](const Step& s) { return s.name == name; });
  };
  const Step& configure = step("configure");
  EXPECT_THAT(configure.argv, Contains(run.staging_dir + "/recipe"));
  const std::string tree = run.staging_dir + "/src";
  EXPECT_THAT(configure.argv, Contains("-DFLASH_ATTN_SOURCE=" + tree));
  EXPECT_THAT(configure.argv, Contains("-DFLASH_ATTN_ARCHS=90"));
  EXPECT_THAT(configure.argv, Contains(HasSubstr("-DFLASH_ATTN_DISABLE=BACKWARD;SPLIT;PAGEDKV")));
  EXPECT_THAT(configure.argv, Contains("-DFLASH_ATTN_PROFILE=minimal"));
  EXPECT_THAT(configure.argv, Contains("-DFLASH_ATTN_FLAVOUR=fa3"));
  EXPECT_THAT(configure.argv, Contains("-DCMAKE_BUILD_TYPE=Release"));
  EXPECT_THAT(configure.argv, Contains("-DCMAKE_CUDA_COMPILER=/usr/local/cuda-13.0/bin/nvcc"));
  EXPECT_THAT(configure.argv, Contains("-DCMAKE_CUDA_COMPILER_LAUNCHER=/cache/bin/fabuild-cc-1"));
  EXPECT_THAT(configure.argv, Contains("-DCMAKE_MAKE_PROGRAM=/usr/bin/ninja"));
  // The build is `cmake --build` with no -j: the runner sets CMAKE_BUILD_PARALLEL_LEVEL from the
  // cell's grant, beside MAX_JOBS; the compile gives the budget back when it ends.
  EXPECT_THAT(step("build").argv, ElementsAre("/usr/bin/cmake", "--build", run.staging_dir + "/build"));
  EXPECT_TRUE(step("build").releases_share);
  for (const auto& [k, v] : run.env) {
    EXPECT_NE(k, "MAX_JOBS");
    EXPECT_NE(k, "CMAKE_BUILD_PARALLEL_LEVEL");
  }
  EXPECT_THAT(run.env, Contains(std::pair<std::string, std::string>{"FABUILD_CC_DIR", "/objects"}));
  EXPECT_THAT(run.env, Contains(std::pair<std::string, std::string>{"PATH", "/usr/local/cuda-13.0/bin:/usr/bin"}));
  EXPECT_THAT(step("test").argv,
              ElementsAre(run.staging_dir + "/consumer/flash_attn_varlen_test", "--allow-no-device"));
  EXPECT_EQ(run.output_dir, "/house/fa3.0.0/lib/cu130/minimal");
}

// The recipe builds the flavour of the cell's package, never the one a tree's directories
// suggest (a FlashAttention clone holds hopper/ and csrc/flash_attn), and the build type of its
// `build: {type:}`.
TEST(LibrarySteps, TheFlavourIsThePackagesAndTheBuildTypeTheMatrixs) {
  const fs::path tree = "/stage/src";
  for (const auto& [package, flavour] : std::vector<std::pair<std::string, std::string>>{
           {"flash-attn-3", "fa3"}, {"flash-attn", "fa2"}, {"flash-example", "example"}}) {
    const auto cells = library_cells(package);
    EXPECT_THAT(recipe_arguments(cells->at(0), tree), Contains("-DFLASH_ATTN_FLAVOUR=" + flavour)) << package;
    EXPECT_THAT(recipe_arguments(cells->at(0), tree), Contains("-DCMAKE_BUILD_TYPE=Release")) << package;
  }
  const auto debug = library_cells("flash-attn", "build: {type: debug}\n");
  EXPECT_THAT(recipe_arguments(debug->at(0), tree), Contains("-DCMAKE_BUILD_TYPE=Debug"));
  EXPECT_EQ(debug->at(0).id(), "fa3.0.0-lib-cu130-linux_x86_64-minimal-debug");
}

TEST(LibraryChecks, AnInstalledTreeMustBeWhatAConsumerNeeds) {
  test::ScratchDir dir("libcheck");
  const RealFiles files;
  const auto cells = library_cells();
  const Expected<std::map<std::string, std::string>> empty = verify_installed_library(files, dir.path(), cells->at(0));
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error().what, HasSubstr("no include/flash_attn/flash_attn.h"));
  EXPECT_THAT(empty.error().what, HasSubstr("no lib/libflash_attn.so"));
  // A library that exports a helper beside the C API, of another version.
  fs::create_directories(dir.path() / "lib");
  fs::create_directories(dir.path() / "share" / "flash_attn");
  std::ofstream(dir.path() / "share" / "flash_attn" / "build_info.txt") << "fa3 2.9.9, archs 90, profile minimal\n";
  std::ofstream(dir.path() / "lib.c")
      << "int flash_attn_varlen_fwd(void) { return 0; }\nint helper(void) { return 1; }\n";
  const std::string cmd = "cc -shared -fPIC -o '" + (dir.path() / "lib" / "libflash_attn.so").string() + "' '" +
                          (dir.path() / "lib.c").string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto bad = verify_installed_library(files, dir.path(), cells->at(0));
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().what, HasSubstr("the source is version 2.9.9, the cell is 3.0.0"));
  EXPECT_THAT(bad.error().what,
              HasSubstr("it does not export flash_attn_api_version, flash_attn_build_info, flash_attn_capabilities"));
  EXPECT_THAT(bad.error().what, HasSubstr("it exports 1 function beyond the C API (helper)"));
}

}  // namespace
}  // namespace fabuild
