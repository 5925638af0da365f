// fabuild-cc for real with debug information (-g, as Python's CFLAGS give torch's C++ compiles):
// one cell's compile in two wheelhouses, whose staging directories differ (FABUILD_CC_BASEDIR).

#include <gtest/gtest.h>

#include "support.h"

namespace fabuild::objcache {
namespace {

namespace fs = std::filesystem;
using test::Ran;
using test::run;
using test::tally_lines;
using test::write;

class DebugMap : public ::testing::Test {
 protected:
  DebugMap() : scratch_("objcache-debug-map"), cache_(scratch_.path() / "cache"), tally_(scratch_.path() / "tally") {
    // Both wheelhouses' compiles read one environment's headers, as runs sharing a cache do.
    write(scratch_.path() / "venv" / "include" / "torch" / "extension.h", "#pragma once\n#define TORCH_LIKE 2\n");
    for (const char* house : {"house-1", "house-2"}) {
      const fs::path stage = staging(house);
      write(stage / "src" / "csrc" / "api.cpp",
            "#include \"local.h\"\n#include <torch/extension.h>\nint api() { return LOCAL + TORCH_LIKE; }\n");
      write(stage / "src" / "csrc" / "local.h", "#define LOCAL 1\n");
      fs::create_directories(stage / "src" / "build");
    }
  }

  [[nodiscard]] fs::path staging(const std::string& house) const {
    return scratch_.path() / house / ".staging" / "cp312-torch2.11-cu130";
  }

  // torch's rule for a C++ source, with -g among Python's flags; the wrapper told the cell's
  // staging directory unless `base` is false.
  Ran compile(const std::string& house, bool base = true, std::vector<std::string> extra = {}) const {
    const fs::path stage = staging(house);
    std::vector<std::string> argv = {FABUILD_CC_BINARY,
                                     "g++",
                                     "-MMD",
                                     "-MF",
                                     (stage / "src" / "build" / "api.o.d").string(),
                                     "-I" + (stage / "src" / "csrc").string(),
                                     "-I" + (scratch_.path() / "venv" / "include").string(),
                                     "-g",
                                     "-O2",
                                     "-c",
                                     (stage / "src" / "csrc" / "api.cpp").string(),
                                     "-o",
                                     (stage / "src" / "build" / "api.o").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::vector<std::string> env = {"FABUILD_CC_DIR=" + cache_.string(), "FABUILD_CC_TALLY=" + tally_.string()};
    if (base) env.push_back("FABUILD_CC_BASEDIR=" + stage.string());
    return run(argv, env, stage / "src" / "build", scratch_.path());
  }

  [[nodiscard]] std::string object(const std::string& house) const {
    return fabuild::test::ScratchDir::read(staging(house) / "src" / "build" / "api.o");
  }

  [[nodiscard]] std::vector<std::string> outcomes() const {
    std::vector<std::string> out;
    for (const auto& line : tally_lines(tally_)) out.push_back(line.at(0));
    return out;
  }

  fabuild::test::ScratchDir scratch_;
  fs::path cache_;
  fs::path tally_;
};

TEST_F(DebugMap, TheSameCellInAnotherWheelhouseIsAHitWithNoStagingPathInItsObject) {
  const Ran first = compile("house-1");
  ASSERT_EQ(first.code, 0) << first.err;
  const Ran second = compile("house-2");
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "hit"})) << tally_lines(tally_).back().at(3);

  // The object names neither wheelhouse: its debug information says /fabuild-staging.
  const std::string obj = object("house-2");
  EXPECT_EQ(obj.find("house-1"), std::string::npos);
  EXPECT_EQ(obj.find("house-2"), std::string::npos);
  EXPECT_NE(obj.find("/fabuild-staging"), std::string::npos);

  // The depfile names house-2's files, for ninja to watch.
  const std::string deps = fabuild::test::ScratchDir::read(staging("house-2") / "src" / "build" / "api.o.d");
  EXPECT_NE(deps.find((staging("house-2") / "src" / "csrc" / "local.h").string()), std::string::npos) << deps;
  EXPECT_EQ(deps.find("house-1"), std::string::npos) << deps;

  // A header changed under the staging directory is a miss, as without debug information.
  write(staging("house-2") / "src" / "csrc" / "local.h", "#define LOCAL 7\n");
  ASSERT_EQ(compile("house-2").code, 0);
  EXPECT_EQ(outcomes().back(), "miss");
}

TEST_F(DebugMap, WithoutTheStagingDirectoryEveryPathStaysInTheKey) {
  ASSERT_EQ(compile("house-1", false).code, 0);
  ASSERT_EQ(compile("house-2", false).code, 0);
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  // Left as the compiler writes it: the object names its own wheelhouse.
  EXPECT_NE(object("house-2").find("house-2"), std::string::npos);
}

TEST_F(DebugMap, ACommandThatMapsPathsItselfIsLeftAsItIs) {
  const std::vector<std::string> own = {"-fdebug-prefix-map=" + scratch_.path().string() + "=/mine"};
  ASSERT_EQ(compile("house-1", true, own).code, 0);
  ASSERT_EQ(compile("house-2", true, own).code, 0);
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  EXPECT_EQ(object("house-2").find("/fabuild-staging"), std::string::npos);
}

}  // namespace
}  // namespace fabuild::objcache
