// A win_amd64 cell planned on a Windows host, on Linux: the System says win_amd64, its command
// runner answers as cmd.exe, nvcc.exe, py.exe and python.exe answer there, and the toolkit,
// interpreter and vcvarsall.bat are files in a scratch directory. What the cell's processes
// would get is checked: the captured MSVC environment, CUDA_HOME, a ';' PATH with the toolkit
// and the venv's Scripts first, DISTUTILS_USE_SDK=1 and no C++11 ABI switch, the matrix's own
// env: after MSVC's, and the venv's python.exe running setup.py; and what the plan says.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "../support/fake_system.h"
#include "../support/scratch_dir.h"
#include "app/msvc_capture.h"
#include "app/plan.h"
#include "app/render.h"
#include "app/site_build.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

std::string utf16(const std::string& ascii) {
  std::string out;
  for (char c : ascii) out += {c, '\0'};
  return out;
}

class FakeWindowsHost : public CommandRunner {
 public:
  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    std::chrono::milliseconds) override {
    calls.push_back(argv);
    const std::string& program = argv.front();  // a Windows path: no '/' to cut at here
    if (program.ends_with("cmd.exe")) {         // the capture's batch file: vcvarsall.bat, then `set` into a file
      ++captures;
      const Environment vars = Environment::parse(env);
      std::ofstream(vars.value("FABUILD_VCVARS_OUT"), std::ios::binary)
          << utf16("PATH=C:\\VS\\bin\\Hostx64\\x64;C:\\Kits\\bin;" + vars.value("PATH") +
                   "\r\nINCLUDE=C:\\VS\\include;C:\\Kits\\ucrt\r\nLIB=C:\\VS\\lib\\x64\r\nVSCMD_VER=17.14.4\r\n"
                   "VCToolsVersion=14.44.35207\r\nNVCC_APPEND_FLAGS=from-vcvars\r\n");
      return ok("");
    }
    if (program.ends_with("nvcc.exe")) return ok("Cuda compilation tools, release 12.8, V12.8.93\r\n");
    if (program.ends_with("py.exe")) return ok("3.12\r\n" + python + "\r\n");
    if (argv.front() == python)
      return ok(argv.size() > 2 && argv[2].find("sys.version_info") != std::string::npos
                    ? "3.12\r\n" + python + "\r\n"
                    : "{}");  // the torch probe: no torch here
    ExitStatus failed;
    failed.kind = ExitStatus::Kind::kSpawnFailed;
    failed.error = "not found";
    return CommandResult{failed, ""};
  }
  static CommandResult ok(std::string out) { return CommandResult{ExitStatus{}, std::move(out)}; }
  std::string python;
  int captures = 0;
  std::vector<std::vector<std::string>> calls;
};

class WindowsSite : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path d = dir.path();
    fs::create_directories(d / "src");
    std::ofstream(d / "src" / "setup.py") << "# the package\n";
    fs::create_directories(d / "cuda" / "bin");
    std::ofstream(d / "cuda" / "bin" / "nvcc.exe") << "";
    fs::create_directories(d / "bin");
    std::ofstream(d / "bin" / "py.exe") << "";
    fs::permissions(d / "bin" / "py.exe", fs::perms::owner_all);
    fs::create_directories(d / "Python312");
    runner->python = (d / "Python312" / "python.exe").string();
    std::ofstream(runner->python) << "";
    fs::create_directories(d / "vs");
    std::ofstream(d / "vs" / "vcvarsall.bat") << "@echo off\r\n";
    fs::create_directories(d / "toolchains");
    std::ofstream(d / "toolchains" / "host.yaml")
        << "msvc: {vcvarsall: '" << (d / "vs" / "vcvarsall.bat").string() << "'}\n";
    std::ofstream(d / "m.yaml") << "package: flash-attn\nversions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\n"
                                   "python: [cp312]\nplatform: [win_amd64]\nprovision: host\narchs: \"80\"\n"
                                   "source: {path: src}\ntorch_index: https://torch-index.invalid/whl\n"
                                   "env: {NVCC_APPEND_FLAGS: \"-Xcompiler=/Zc:preprocessor\"}\n";
    system = testing::fake_system(d / "cache", 8, 64);
    system.platform = "win_amd64";
    system.commands = runner;
    system.env = Environment{{"ComSpec", "C:\\Windows\\system32\\cmd.exe"},
                             {"PATH", (d / "bin").string()},
                             {"CUDA_PATH_V12_8", (d / "cuda").string()},
                             {"SystemRoot", "C:\\Windows"}};
    options.matrix = (d / "m.yaml").string();
    options.output_dir = (d / "wheelhouse").string();
  }

  test::ScratchDir dir{"windows-site"};
  std::shared_ptr<FakeWindowsHost> runner = std::make_shared<FakeWindowsHost>();
  System system;
  Options options;
};

std::string value_of(const EnvList& env, const std::string& name) {
  for (const auto& [k, v] : env) {
    if (k == name) return v;
  }
  return "<unset>";
}

TEST_F(WindowsSite, ACellBuildsInTheCapturedDeveloperEnvironment) {
  const Plan plan = make_plan(options, system);
  ASSERT_EQ(plan.cells.size(), 1u);
  EXPECT_TRUE(plan.cache.enabled);  // fabuild-cc stands in for nvcc on Windows too (docs/windows.md)
  const SiteBuild site = plan_site_build(plan, {0}, false, system);
  ASSERT_TRUE(site.settled.empty()) << site.settled.at(0).message;
  ASSERT_EQ(site.cells.size(), 1u);
  EXPECT_TRUE(site.object_cache);
  const CellRun& run = site.cells[0];
  const std::string venv = (dir.path() / "cache" / "venvs" / "cp312-torch2.8-cu128").string();
  EXPECT_EQ(value_of(run.env, "INCLUDE"), "C:\\VS\\include;C:\\Kits\\ucrt");
  EXPECT_EQ(value_of(run.env, "LIB"), "C:\\VS\\lib\\x64");
  EXPECT_EQ(value_of(run.env, "CUDA_HOME"), (dir.path() / "cuda").string());
  EXPECT_EQ(value_of(run.env, "PATH"), (dir.path() / "cuda" / "bin").string() + ";" + venv + "/Scripts;" +
                                           "C:\\VS\\bin\\Hostx64\\x64;C:\\Kits\\bin;" + (dir.path() / "bin").string());
  EXPECT_EQ(value_of(run.env, "DISTUTILS_USE_SDK"), "1");
  EXPECT_THAT(value_of(run.env, "PYTORCH_NVCC"), HasSubstr("fabuild-cc"));
  EXPECT_EQ(value_of(run.env, "FABUILD_CC_DIR"), (dir.path() / "cache" / "objects").string());
  EXPECT_EQ(value_of(run.env, "FLASH_ATTN_LOCAL_VERSION"), "cu128torch2.8");
  EXPECT_THAT(run.env, Not(Contains(Pair("FLASH_ATTENTION_FORCE_CXX11_ABI", ::testing::_))));
  // The matrix's env: comes after MSVC's, so it wins where both set a variable.
  std::vector<std::string> appended;
  for (const auto& [k, v] : run.env) {
    if (k == "NVCC_APPEND_FLAGS") appended.push_back(v);
  }
  EXPECT_THAT(appended, ElementsAre("from-vcvars", "-Xcompiler=/Zc:preprocessor"));
  const auto build = std::find_if(run.steps.begin(), run.steps.end(), [](const Step& s) { return s.name == "build"; });
  ASSERT_NE(build, run.steps.end());
  EXPECT_THAT(build->argv,
              ElementsAre(venv + "/Scripts/python.exe", "setup.py", "bdist_wheel", "--dist-dir", ::testing::_));
  EXPECT_EQ(runner->captures, 1);
}

TEST_F(WindowsSite, ThePlanShowsTheCaptureAndWhatItChanges) {
  Plan plan = make_plan(options, system);
  HostProbe probe(*system.commands, load_host_toolchains(host_toolchains_file(plan)), system.env, true);
  MsvcCaptures captures(probe, plan.cache_root);
  resolve_msvc(plan, captures);
  std::ostringstream out;
  print_plan(plan, *system.files, out, true);
  // fabuild-cc.exe stands in for nvcc there (docs/windows.md): the cache is on as on Linux.
  EXPECT_THAT(out.str(), HasSubstr("object cache: " + (dir.path() / "cache" / "objects").string()));
  EXPECT_THAT(out.str(), Not(HasSubstr("object cache: off")));
  EXPECT_THAT(out.str(), HasSubstr("msvc:       CUDA 12.8: " + (dir.path() / "vs" / "vcvarsall.bat").string() +
                                   " x64, VS 17.14.4, tools 14.44.35207 (captured now): 6 variables set or changed"));
  EXPECT_THAT(out.str(), HasSubstr("~ PATH: 2 entries in front: C:\\VS\\bin\\Hostx64\\x64;C:\\Kits\\bin"));
  EXPECT_THAT(out.str(), HasSubstr("+ INCLUDE=C:\\VS\\include;C:\\Kits\\ucrt"));
  EXPECT_THAT(out.str(), Not(HasSubstr("+ SystemRoot")));  // fabuild's own variables are no change
  EXPECT_THAT(out.str(), HasSubstr("DISTUTILS_USE_SDK=1"));

  Plan again = make_plan(options, system);  // a second plan takes the capture from the cache
  MsvcCaptures cached(probe, again.cache_root);
  resolve_msvc(again, cached);
  EXPECT_EQ(runner->captures, 1);
  ASSERT_TRUE(again.msvc.at("12.8"));
  EXPECT_TRUE(again.msvc.at("12.8")->from_cache);
}

TEST_F(WindowsSite, NoVisualStudioFailsTheCellSayingWhatWasTried) {
  std::ofstream(dir.path() / "toolchains" / "host.yaml") << "{}\n";
  const Plan plan = make_plan(options, system);
  const SiteBuild site = plan_site_build(plan, {0}, false, system);
  ASSERT_EQ(site.settled.size(), 1u);
  EXPECT_EQ(site.settled[0].step, "msvc");
  EXPECT_THAT(site.settled[0].message, HasSubstr("no Visual Studio with the C++ x64 tools on this host"));
  EXPECT_THAT(site.settled[0].message, HasSubstr("ProgramFiles(x86) is not set"));
}

TEST_F(WindowsSite, NoCudaFailsTheCellNamingTheVariablesAndTheInstaller) {
  system.env = Environment{{"ComSpec", "C:\\Windows\\system32\\cmd.exe"}, {"PATH", (dir.path() / "bin").string()}};
  const Plan plan = make_plan(options, system);
  const SiteBuild site = plan_site_build(plan, {0}, false, system);
  ASSERT_EQ(site.settled.size(), 1u);
  EXPECT_EQ(site.settled[0].step, "toolkit");
  EXPECT_THAT(site.settled[0].message, HasSubstr("%CUDA_PATH_V12_8%: not set"));
  EXPECT_THAT(site.settled[0].message, HasSubstr("NVIDIA's installer"));
}

}  // namespace
}  // namespace fabuild
