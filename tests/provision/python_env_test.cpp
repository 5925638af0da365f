#include "provision/python_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>

#include "../support/scratch_dir.h"
#include "matrix/expand.h"
#include "matrix/loader.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

Cell cell_for(const char* torch = "2.11", const char* cuda = "13.0") {
  // torch_index: every CUDA build of torch (pip's index has one per series).
  return expand(parse_matrix(fmt::format("versions: [2.8.3]\ntorch: [\"{}\"]\ncuda: [\"{}\"]\npython: [cp311]\n"
                                         "torch_index: https://torch-index.invalid/whl\n",
                                         torch, cuda),
                             "m.yaml"))
      .cells.at(0);
}

// The torch check run for real by the system's python3 against a stand-in torch package that
// counts its imports: a passed check leaves a stamp, and the next check with the same torch
// imports nothing; a torch changed since is imported and checked again.
class TorchCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
    fs::create_directories(torch_dir);
    write_torch("2.11.0+cu130", "13.0");
  }

  void write_torch(const std::string& version, const std::string& cuda, bool cxx11_abi = true) {
    std::ofstream(torch_dir / "__init__.py")
        << "open(" << python_string(imports_log.string()) << ", 'a').write('import\\n')\n"
        << "from . import version\n__version__ = version.__version__\n"
        << "class _C:\n    _GLIBCXX_USE_CXX11_ABI = " << (cxx11_abi ? "True" : "False") << "\n";
    std::ofstream(torch_dir / "version.py")
        << "__version__ = '" << version << "'\ncuda = '" << cuda << "'\nhip = None\n";
  }

  static std::string python_string(const std::string& s) { return "'" + s + "'"; }

  CommandResult check(const Cell& cell, bool stamped = true) {
    PythonEnv env =
        plan_python_env(cell, Interpreter{"/usr/bin/python3", cell.python}, TorchProbe{}, "/nonexistent", "");
    env.check.front() = "/usr/bin/python3";  // the interpreter "as it is": the stand-in is on its path
    const std::vector<std::string> argv =
        torch_check_argv(env, (scratch.path() / "seen").string(), stamped ? stamps.string() : std::string());
    ProcessCommandRunner runner;
    return runner.run(argv, {"PYTHONPATH=" + site.string(), "PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"},
                      std::chrono::seconds(60));
  }

  int imports() const {
    std::ifstream in(imports_log);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  test::ScratchDir scratch{"fabuild-torch-check"};
  fs::path site = scratch.path() / "site";
  fs::path torch_dir = site / "torch";
  fs::path imports_log = scratch.path() / "imports";
  fs::path stamps = scratch.path() / "stamps";
};

TEST_F(TorchCheck, APassedCheckIsNotRepeatedWhileTorchIsUnchanged) {
  const CommandResult first = check(cell_for());
  ASSERT_TRUE(first.ok()) << first.output;
  EXPECT_EQ(imports(), 1);
  EXPECT_THAT(first.output, HasSubstr("fabuild: torch 2.11.0+cu130 (CUDA 13.0, cxx11abi TRUE)"));
  const CommandResult second = check(cell_for());
  ASSERT_TRUE(second.ok()) << second.output;
  EXPECT_EQ(imports(), 1) << "the second check imported torch";
  EXPECT_THAT(second.output, HasSubstr("checked before; torch unchanged since"));
  EXPECT_EQ(test::ScratchDir::read(scratch.path() / "seen"), "2.11.0+cu130");  // for the manifest, either way
}

TEST_F(TorchCheck, ATorchInstalledOverItIsCheckedAgain) {
  ASSERT_TRUE(check(cell_for()).ok());
  // Another build of another series, as pip would leave it: other bytes, a new file.
  fs::remove(torch_dir / "version.py");
  write_torch("2.10.0+cu130", "13.0");
  const CommandResult again = check(cell_for());
  EXPECT_EQ(imports(), 2);
  EXPECT_FALSE(again.ok());
  EXPECT_THAT(again.output, HasSubstr("torch 2.10.0 is not the 2.11 series"));
}

TEST_F(TorchCheck, AFailedCheckLeavesNoStampAndEachCellKindHasItsOwn) {
  const CommandResult wrong = check(cell_for("2.11", "12.8"));  // a CUDA 12.8 cell, torch is a 13.0 build
  EXPECT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.output, HasSubstr("the cell needs CUDA 12.8"));
  EXPECT_FALSE(check(cell_for("2.11", "12.8")).ok());
  EXPECT_EQ(imports(), 2) << "a failed check must not be remembered";
  ASSERT_TRUE(check(cell_for()).ok());  // the 13.0 cell: checked for itself
  EXPECT_EQ(imports(), 3);
  EXPECT_TRUE(check(cell_for()).ok());
  EXPECT_EQ(imports(), 3);
}

// FlashAttention builds both ABIs of torch 2.6 against its one cxx11abi FALSE torch: its
// setup.py forces the C++11 ABI on (FLASH_ATTENTION_FORCE_CXX11_ABI=TRUE), never off. The check
// tells torch's ABI apart from the one the build forces.
TEST_F(TorchCheck, BothAbisBuildAgainstOneTorchWhenThePackageForcesTheAbi) {
  fs::remove(torch_dir / "version.py");
  write_torch("2.6.0+cu124", "12.4", false);
  const auto cell_with = [](const char* abi) {
    return expand(parse_matrix(fmt::format("versions: [2.8.3]\ntorch: [\"2.6\"]\ncuda: [\"12.4\"]\npython: [cp311]\n"
                                           "cxx11_abi: [\"{}\"]\ntorch_index: https://torch-index.invalid/whl\n",
                                           abi),
                               "m.yaml"))
        .cells.at(0);
  };
  const CommandResult off = check(cell_with("FALSE"), false);
  ASSERT_TRUE(off.ok()) << off.output;
  EXPECT_THAT(off.output, Not(HasSubstr("forces")));
  const CommandResult forced = check(cell_with("TRUE"), false);
  ASSERT_TRUE(forced.ok()) << forced.output;
  EXPECT_THAT(forced.output, HasSubstr("torch's ABI is cxx11abi FALSE; this build forces cxx11abi TRUE "
                                       "(FLASH_ATTENTION_FORCE_CXX11_ABI=TRUE)"));
  // The other way round cannot be forced: a cxx11abiFALSE cell needs a cxx11abi FALSE torch.
  fs::remove(torch_dir / "version.py");
  write_torch("2.6.0+cu124", "12.4", true);
  const CommandResult wrong = check(cell_with("FALSE"), false);
  EXPECT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.output,
              HasSubstr("torch's ABI is cxx11abi TRUE, the cell builds cxx11abiFALSE (a package can force "
                        "the C++11 ABI on, never off"));
}

// torch_probe.py (src/provision/py/) finds torch's version and CUDA build without importing it,
// from its distribution metadata and torch/version.py.
TEST_F(TorchCheck, TheProbeReadsTorchWithoutImportingIt) {
  fs::create_directories(site / "torch-2.11.0+cu130.dist-info");
  std::ofstream(site / "torch-2.11.0+cu130.dist-info" / "METADATA")
      << "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n";
  const fs::path python = scratch.path() / "python";  // the interpreter, with the stand-in on its path
  std::ofstream(python) << "#!/bin/sh\nPYTHONPATH=" << site.string()
                        << " PYTHONDONTWRITEBYTECODE=1 exec /usr/bin/python3 \"$@\"\n";
  fs::permissions(python, fs::perms::owner_all);
  ProcessCommandRunner runner;
  const TorchProbe probe = probe_torch(runner, python.string());
  EXPECT_EQ(probe.torch_version, "2.11.0+cu130");
  EXPECT_EQ(probe.torch_cuda, "13.0");
  EXPECT_FALSE(probe.torch_hip.has_value());  // version.py says hip = None
  EXPECT_EQ(imports(), 0) << "the probe imported torch";
  const TorchProbe none = probe_torch(runner, "/usr/bin/python3");  // no torch on its path
  EXPECT_FALSE(none.torch_version.has_value());
}

TEST_F(TorchCheck, WithoutAStampDirectoryEveryCheckImports) {
  ASSERT_TRUE(check(cell_for(), false).ok());
  ASSERT_TRUE(check(cell_for(), false).ok());
  EXPECT_EQ(imports(), 2);
  EXPECT_FALSE(fs::exists(stamps));
}

TEST_F(TorchCheck, ADamagedStampIsCheckedAgain) {
  ASSERT_TRUE(check(cell_for()).ok());
  for (const auto& e : fs::directory_iterator(stamps)) std::ofstream(e.path(), std::ios::trunc) << "{not json";
  const CommandResult again = check(cell_for());
  ASSERT_TRUE(again.ok()) << again.output;
  EXPECT_THAT(again.output, Not(HasSubstr("checked before")));
  EXPECT_EQ(imports(), 2);
}

// uv makes the venv (seeded with pip, which a pip source uses) and installs from where pip
// would: its configured indexes, with torch_index's own in place of pip's index-url for torch.
TEST(PythonEnvPlan, UvInstallsFromPipsIndexes) {
  EnvTool uv{"/usr/bin/uv", parse_pip_config("global.index-url='https://mirror.invalid/simple'\n"
                                             "global.cert='/etc/ca.pem'\n")};
  const Interpreter python{"/usr/bin/python3.11", *PythonTag::parse("cp311")};
  const PythonEnv env = plan_python_env(cell_for(), python, {}, "/venvs", "", uv);
  ASSERT_EQ(env.setup.size(), 3u);
  EXPECT_EQ(env.setup[0].argv, (std::vector<std::string>{"/usr/bin/uv", "venv", "--seed", "--python",
                                                         "/usr/bin/python3.11", "/venvs/cp311-torch2.11-cu130"}));
  EXPECT_EQ(env.setup[1].argv, (std::vector<std::string>{"/usr/bin/uv", "pip", "install", "--python",
                                                         "/venvs/cp311-torch2.11-cu130/bin/python", "torch==2.11.*",
                                                         "--index-url", "https://mirror.invalid/simple"}));
  EXPECT_THAT(env.setup[1].env,
              ::testing::ElementsAre(std::make_pair(std::string("SSL_CERT_FILE"), std::string("/etc/ca.pem"))));
  const PythonEnv own = plan_python_env(cell_for(), python, {}, "/venvs", "https://torch.invalid/whl", uv);
  EXPECT_EQ(own.setup[1].argv, (std::vector<std::string>{"/usr/bin/uv", "pip", "install", "--python",
                                                         "/venvs/cp311-torch2.11-cu130/bin/python", "torch==2.11.*",
                                                         "--index-url", "https://torch.invalid/whl/cu130"}));
  EXPECT_THAT(own.setup[2].argv, ::testing::Contains("https://mirror.invalid/simple"));  // the build tools: pip's index
  const PythonEnv pip = plan_python_env(cell_for(), python, {}, "/venvs", "", {});
  EXPECT_EQ(pip.setup[0].argv.front(), "/usr/bin/python3.11");
  EXPECT_EQ(pip.setup[1].argv, (std::vector<std::string>{"/venvs/cp311-torch2.11-cu130/bin/python", "-m", "pip",
                                                         "install", "--disable-pip-version-check", "torch==2.11.*"}));
}

}  // namespace
}  // namespace fabuild
