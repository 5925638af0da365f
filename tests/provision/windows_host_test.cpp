// A Windows host's toolchain, looked for on Linux: the programs (vswhere.exe, nvcc.exe, py.exe,
// uv.exe, python.exe) are empty files in a scratch directory that stands for C:\, and a fake
// command runner answers for them as they answer on Windows.

#include "provision/windows_host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>

#include "../support/scratch_dir.h"
#include "util/error.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Version V(const char* s) { return *Version::parse(s); }

class FakeWindows : public CommandRunner {
 public:
  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>&,
                    std::chrono::milliseconds) override {
    calls.push_back(argv);
    const std::string program = fs::path(argv.front()).filename().string();
    if (const auto it = answers.find(program); it != answers.end()) return it->second(argv);
    if (const auto it = answers.find(argv.front()); it != answers.end()) return it->second(argv);
    ExitStatus spawn_failed;
    spawn_failed.kind = ExitStatus::Kind::kSpawnFailed;
    spawn_failed.error = "CreateProcessW(" + argv.front() + "): not found";
    return CommandResult{spawn_failed, ""};
  }
  std::map<std::string, std::function<CommandResult(const std::vector<std::string>&)>> answers;
  std::vector<std::vector<std::string>> calls;
};

CommandResult ok(std::string output) { return CommandResult{ExitStatus{}, std::move(output)}; }
CommandResult exited(int code, std::string output) {
  ExitStatus s;
  s.code = code;
  return CommandResult{s, std::move(output)};
}

class WindowsHost : public ::testing::Test {
 protected:
  // An (empty) file at `relative` under the scratch directory; its path.
  std::string file(const fs::path& relative, bool executable = false) {
    const fs::path p = dir.path() / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "";
    if (executable) fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }
  // A CUDA toolkit directory whose nvcc.exe the fake answers for with `release`.
  std::string toolkit(const fs::path& relative, const std::string& release) {
    const std::string nvcc = file(relative / "bin" / "nvcc.exe");
    runner.answers[nvcc] = [release](const std::vector<std::string>& argv) {
      EXPECT_THAT(argv, ElementsAre(::testing::_, "--version"));
      return ok("nvcc: NVIDIA (R) Cuda compiler driver\r\nCuda compilation tools, release " + release + ", V" +
                release + ".85\r\n");
    };
    return (dir.path() / relative).string();
  }

  test::ScratchDir dir{"windows-host"};
  FakeWindows runner;
  HostToolchains toolchains;
};

TEST_F(WindowsHost, VswhereFindsVisualStudioAndItsVcvarsall) {
  const std::string vswhere = file("Program Files (x86)/Microsoft Visual Studio/Installer/vswhere.exe");
  const fs::path install = dir.path() / "Program Files/Microsoft Visual Studio/2022/BuildTools";
  const std::string vcvarsall = file(install / "VC/Auxiliary/Build/vcvarsall.bat");
  runner.answers["vswhere.exe"] = [&](const std::vector<std::string>& argv) {
    EXPECT_THAT(argv, ElementsAre(vswhere, "-latest", "-products", "*", "-requires",
                                  "Microsoft.VisualStudio.Component.VC.Tools.x86.x64", "-property", "installationPath",
                                  "-utf8"));
    return ok(install.string() + "\r\n");
  };
  const Environment env{{"ProgramFiles(x86)", (dir.path() / "Program Files (x86)").string()}};
  const auto [found, tried] = find_vcvarsall(runner, toolchains, env);
  EXPECT_EQ(found, vcvarsall);
  ASSERT_EQ(tried.size(), 1u);
  EXPECT_THAT(tried[0].candidate, HasSubstr("(vswhere: " + install.string() + ")"));
}

TEST_F(WindowsHost, NoVisualStudioSaysWhatWasTriedAndWhatToInstall) {
  file("Program Files (x86)/Microsoft Visual Studio/Installer/vswhere.exe");
  runner.answers["vswhere.exe"] = [](const std::vector<std::string>&) { return ok(""); };
  const Environment env{{"ProgramFiles(x86)", (dir.path() / "Program Files (x86)").string()}};
  const auto [answer, tried] = find_vcvarsall(runner, toolchains, env);
  EXPECT_EQ(answer, std::nullopt);
  const std::string message = missing_vcvarsall(tried);
  EXPECT_THAT(message, HasSubstr("vswhere.exe (%ProgramFiles(x86)%) -latest -products * -requires "
                                 "Microsoft.VisualStudio.Component.VC.Tools.x86.x64"));
  EXPECT_THAT(message, HasSubstr("no installation with the x64 C++ tools"));
  EXPECT_THAT(message, HasSubstr("\"Desktop development with C++\" workload"));
  EXPECT_THAT(message, HasSubstr("msvc: {vcvarsall: PATH}"));

  const auto [nothing, none] = find_vcvarsall(runner, toolchains, Environment{});
  EXPECT_EQ(nothing, std::nullopt);
  EXPECT_THAT(missing_vcvarsall(none), HasSubstr("ProgramFiles(x86) is not set"));
  EXPECT_THAT(missing_vcvarsall(none), HasSubstr("vswhere.exe on PATH: missing"));
}

TEST_F(WindowsHost, AVcvarsallNamedInHostYamlIsTakenWithoutVswhere) {
  toolchains.msvc.vcvarsall = file("VS/VC/Auxiliary/Build/vcvarsall.bat");
  const auto [answer, tried] = find_vcvarsall(runner, toolchains, Environment{});
  EXPECT_EQ(answer, toolchains.msvc.vcvarsall);
  EXPECT_TRUE(runner.calls.empty());
}

TEST_F(WindowsHost, ToolsetsPerCudaSetThenTheDefault) {
  toolchains.msvc.toolset = "14.44";
  toolchains.msvc.toolsets[V("12.4")] = "14.38";
  EXPECT_EQ(msvc_toolset_for(toolchains, V("12.4")), "14.38");
  EXPECT_EQ(msvc_toolset_for(toolchains, V("12.4.1")), "14.38");
  EXPECT_EQ(msvc_toolset_for(toolchains, V("12.8")), "14.44");
  EXPECT_EQ(msvc_toolset_for(HostToolchains{}, V("12.8")), "");
}

TEST_F(WindowsHost, CudaComesFromItsVersionedVariableFirst) {
  // Both are 12.8 toolkits: CUDA_PATH names the last one installed, CUDA_PATH_V12_8 this release's.
  const Environment env{{"CUDA_PATH", toolkit("cuda128-other", "12.8")},
                        {"CUDA_PATH_V12_8", toolkit("cuda128", "12.8")}};
  const auto [found, tried] = find_windows_cuda(runner, toolchains, env, V("12.8"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->home, (dir.path() / "cuda128").string());
  EXPECT_EQ(found->nvcc, (dir.path() / "cuda128" / "bin" / "nvcc.exe").string());
  EXPECT_EQ(found->build, "12.8.85");
  EXPECT_EQ(tried.back().candidate, (dir.path() / "cuda128").string() + " (%CUDA_PATH_V12_8%)");
}

TEST_F(WindowsHost, ThenCudaPathThenTheDefaultInstallDirectory) {
  const fs::path programs = dir.path() / "Program Files";
  toolkit("Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.8", "12.8");
  const Environment env{{"CUDA_PATH", toolkit("cuda130", "13.0")}, {"ProgramFiles", programs.string()}};
  const auto [found, tried] = find_windows_cuda(runner, toolchains, env, V("12.8"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->home, (programs / "NVIDIA GPU Computing Toolkit" / "CUDA" / "v12.8").string());
  ASSERT_EQ(tried.size(), 4u);
  EXPECT_EQ(tried[0].candidate + ": " + tried[0].outcome, "%CUDA_PATH_V12_8%: not set");
  EXPECT_EQ(tried[1].candidate + ": " + tried[1].outcome, "%CUDA_PATH_V128%: not set");
  EXPECT_EQ(tried[2].outcome, "nvcc 13.0");
  EXPECT_EQ(tried[3].outcome, "nvcc 12.8");
}

// The Windows manual build FlashAttention users follow sets CUDA_PATH_V128, not NVIDIA's V12_8.
TEST_F(WindowsHost, CudaPathWithoutTheUnderscoreIsReadToo) {
  const Environment env{{"CUDA_PATH", toolkit("cuda130", "13.0")}, {"CUDA_PATH_V128", toolkit("cuda128", "12.8")}};
  const auto [found, tried] = find_windows_cuda(runner, toolchains, env, V("12.8"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->home, (dir.path() / "cuda128").string());
  EXPECT_EQ(tried.back().candidate, (dir.path() / "cuda128").string() + " (%CUDA_PATH_V128%)");
}

TEST_F(WindowsHost, HostYamlComesBeforeTheVariablesAndAMissingToolkitSaysWhatToInstall) {
  toolchains.cuda[V("12.8")] = toolkit("mine", "12.8");
  const Environment env{{"CUDA_PATH_V12_8", toolkit("cuda128", "12.8")}};
  const auto [answer, tried] = find_windows_cuda(runner, toolchains, env, V("12.8"));
  EXPECT_EQ(answer->home, (dir.path() / "mine").string());

  const Environment broken{{"CUDA_PATH_V12_4", (dir.path() / "gone").string()}};
  const auto [nothing, none] = find_windows_cuda(runner, HostToolchains{}, broken, V("12.4"));
  EXPECT_FALSE(nothing);
  const std::string message = missing_windows_cuda(V("12.4"), none);
  EXPECT_THAT(message, HasSubstr("no CUDA 12.4 toolkit on this host"));
  EXPECT_THAT(message, HasSubstr((dir.path() / "gone").string() + " (%CUDA_PATH_V12_4%): no "));
  EXPECT_THAT(message, HasSubstr("%CUDA_PATH%: not set"));
  EXPECT_THAT(message, HasSubstr("NVIDIA's installer (it sets CUDA_PATH_V12_4"));
}

TEST_F(WindowsHost, PythonComesFromThePyLauncherAsTheInterpreterItStarts) {
  const std::string py = file("bin/py.exe", true);
  const std::string real = file("Python312/python.exe");
  runner.answers["py.exe"] = [&](const std::vector<std::string>& argv) {
    EXPECT_EQ(argv.at(1), "-3.12");
    EXPECT_EQ(argv.at(2), "-c");
    return ok("3.12\r\n" + real + "\r\n");
  };
  // uv has a 3.12 too; the launcher's comes first.
  file("bin/uv.exe", true);
  const std::string uv_python = file("uv/cpython-3.12.7/python.exe");
  runner.answers["uv.exe"] = [&](const std::vector<std::string>&) { return ok(uv_python + "\r\n"); };
  runner.answers[uv_python] = [&](const std::vector<std::string>&) { return ok("3.12\r\n" + uv_python + "\r\n"); };
  const Environment env{{"PATH", (dir.path() / "bin").string()}};
  const auto [found, tried] = find_windows_python(runner, toolchains, env, *PythonTag::parse("cp312"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, real);
  EXPECT_EQ(tried.at(0).candidate, py + " -3.12");
}

TEST_F(WindowsHost, ThenUvThenPythonOnPathAndNothingFoundNamesEachTry) {
  file("bin/py.exe", true);
  file("bin/uv.exe", true);
  const std::string uv_python = file("uv/cpython-3.12.7/python.exe");
  runner.answers["py.exe"] = [](const std::vector<std::string>&) {
    return exited(103, "No suitable Python runtime found\r\n");
  };
  runner.answers["uv.exe"] = [&](const std::vector<std::string>& argv) {
    EXPECT_THAT(argv, ElementsAre(::testing::_, "python", "find", "3.12"));
    return ok(uv_python + "\r\n");
  };
  runner.answers[uv_python] = [&](const std::vector<std::string>&) { return ok("3.12\r\n" + uv_python + "\r\n"); };
  const Environment env{{"PATH", (dir.path() / "bin").string()}};
  const auto [found, tried] = find_windows_python(runner, toolchains, env, *PythonTag::parse("cp312"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, uv_python);
  EXPECT_EQ(tried.at(0).outcome, "does not run (exit 103)");

  const auto [nothing, none] = find_windows_python(runner, toolchains, Environment{}, *PythonTag::parse("cp311"));
  EXPECT_FALSE(nothing);
  const std::string message = missing_windows_python(*PythonTag::parse("cp311"), none);
  EXPECT_THAT(message, HasSubstr("the py launcher (py.exe): missing"));
  EXPECT_THAT(message, HasSubstr("uv.exe on PATH: missing"));
  EXPECT_THAT(message, HasSubstr("`uv python install 3.11`"));
}

TEST_F(WindowsHost, TheHostProbeOfAWindowsHostLooksThere) {
  const Environment env{{"CUDA_PATH_V12_8", toolkit("cuda128", "12.8")}};
  HostProbe probe(runner, toolchains, env, /*windows=*/true);
  const auto [answer, tried] = probe.find_toolkit(V("12.8"));
  EXPECT_EQ(answer->home, (dir.path() / "cuda128").string());
  EXPECT_THAT(probe.missing_python_here(*PythonTag::parse("cp312"), {}), HasSubstr("py launcher"));
}

TEST_F(WindowsHost, HostYamlHasAnMsvcSection) {
  const fs::path yaml = dir.path() / "host.yaml";
  std::ofstream(yaml) << "msvc:\n  vcvarsall: 'C:\\VS\\VC\\Auxiliary\\Build\\vcvarsall.bat'\n  toolset: \"14.44\"\n"
                         "  toolsets: {\"12.4\": \"14.38\"}\n";
  const HostToolchains t = load_host_toolchains(yaml.string());
  EXPECT_EQ(t.msvc.vcvarsall, "C:\\VS\\VC\\Auxiliary\\Build\\vcvarsall.bat");
  EXPECT_EQ(t.msvc.toolset, "14.44");
  EXPECT_EQ(t.msvc.toolsets.at(V("12.4")), "14.38");
  std::ofstream(yaml) << "msvc:\n  vcvars: x\n";
  EXPECT_THROW(load_host_toolchains(yaml.string()), UserError);
}

}  // namespace
}  // namespace fabuild
