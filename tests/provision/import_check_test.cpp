// import_check.py (src/provision/py/), the import smoke test of a built wheel, run for real by
// the system's python3 against a stand-in torch that notes when it is imported.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../support/scratch_dir.h"
#include "provision/python_env.h"
#include "util/command.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

class ImportCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
    fs::create_directories(site / "torch");
    std::ofstream(site / "torch" / "__init__.py") << "open('" << log.string() << "', 'a').write('torch\\n')\n";
    fs::create_directories(smoke / "pkg");
    std::ofstream(smoke / "pkg" / "__init__.py") << "open('" << log.string() << "', 'a').write('pkg\\n')\n";
  }

  CommandResult check(const std::string& module, const std::string& go = "") {
    std::vector<std::string> env = {"PYTHONPATH=" + site.string(), "PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"};
    if (!go.empty()) env.push_back("FABUILD_GO=" + go);
    ProcessCommandRunner runner;
    return runner.run(import_check_argv("/usr/bin/python3", smoke.string(), module), env, 60s);
  }

  std::string imported() const { return test::ScratchDir::read(log); }

  test::ScratchDir scratch{"fabuild-import-check"};
  fs::path site = scratch.path() / "site";
  fs::path smoke = scratch.path() / "staging" / "smoke";
  fs::path log = scratch.path() / "imports";
};

TEST_F(ImportCheck, ImportsTorchThenTheWheelsModule) {
  const CommandResult r = check("pkg");
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fabuild: imported " + (smoke / "pkg" / "__init__.py").string()));
  EXPECT_EQ(imported(), "torch\npkg\n");
}

TEST_F(ImportCheck, AModuleThatCannotLoadFailsWithPythonsOwnError) {
  std::ofstream(smoke / "pkg" / "__init__.py") << "from . import _C  # a module the wheel lacks\n";
  const CommandResult r = check("pkg");
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.output, HasSubstr("ImportError"));
}

// Started beside the compile: torch first, then nothing until the go file appears.
TEST_F(ImportCheck, WithAGoFileItImportsTorchAndWaitsForIt) {
  const fs::path go = scratch.path() / "staging" / ".go-import";
  std::thread later([&] {
    std::this_thread::sleep_for(500ms);
    EXPECT_EQ(imported(), "torch\n") << "the module was imported before its turn";
    std::ofstream(go) << "go\n";
  });
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = check("pkg", go.string());
  later.join();
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_GE(std::chrono::steady_clock::now() - start, 500ms);
  EXPECT_EQ(imported(), "torch\npkg\n");
}

// Its cell ended (the staging directory is gone) before the wheel was ready: it stops.
TEST_F(ImportCheck, ItStopsWaitingWhenItsCellIsGone) {
  const CommandResult r = check("pkg", (scratch.path() / "gone" / ".go-import").string());
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.output, HasSubstr("the cell ended before its wheel was ready"));
}

}  // namespace
}  // namespace fabuild
