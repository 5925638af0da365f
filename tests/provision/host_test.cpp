#include "provision/host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../support/scratch_dir.h"
#include "util/error.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

Version V(const char* s) { return *Version::parse(s); }

// A fake toolkit: bin/nvcc that prints what the real one prints for `release`.
std::string fake_toolkit(const fs::path& root, const std::string& release) {
  fs::create_directories(root / "bin");
  const fs::path nvcc = root / "bin" / "nvcc";
  std::ofstream(nvcc)
      << "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release " << release
      << ", V" << release << ".41'\n";
  fs::permissions(nvcc, fs::perms::owner_all);
  return root.string();
}

class Host : public ::testing::Test {
 protected:
  test::ScratchDir dir{"fabuild-host"};
  ProcessCommandRunner runner;
};

TEST_F(Host, ToolchainsEntryComesFirst) {
  HostToolchains t;
  t.cuda[V("12.8")] = fake_toolkit(dir.path() / "cuda128", "12.8");
  HostProbe probe(runner, t, {});
  const auto [found, tried] = probe.find_toolkit(V("12.8"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->home, (dir.path() / "cuda128").string());
  EXPECT_EQ(found->version.str(), "12.8");
  EXPECT_THAT(tried.at(0).candidate, HasSubstr("(toolchains/host.yaml)"));
}

TEST_F(Host, CudaHomeOfAnotherVersionIsNotTaken) {
  HostProbe probe(runner, {}, {{"CUDA_HOME", fake_toolkit(dir.path() / "cuda", "13.0")}});
  const auto [answer, tried] = probe.find_toolkit(V("12.4"));
  EXPECT_FALSE(answer.has_value());
  const std::string message = HostProbe::missing_toolkit(V("12.4"), tried);
  EXPECT_THAT(message, HasSubstr("no CUDA 12.4 toolkit on this host"));
  EXPECT_THAT(message, HasSubstr("/usr/local/cuda-12.4: no /usr/local/cuda-12.4/bin/nvcc"));
  EXPECT_THAT(message, HasSubstr((dir.path() / "cuda").string() + " ($CUDA_HOME): nvcc 13.0"));
  EXPECT_THAT(
      message,
      HasSubstr("install the toolkit, e.g. to /usr/local/cuda-12.4, name its directory in toolchains/host.yaml"));
}

// A cell that pins a toolkit release ("12.9.1", as FlashAttention's publish workflow does)
// takes only a toolkit whose version.json names that release: nvcc --version says 12.9 only.
TEST_F(Host, APinnedReleaseTakesTheToolkitWhoseVersionJsonSaysIt) {
  const std::string older = fake_toolkit(dir.path() / "cuda-12.9.0", "12.9");
  std::ofstream(fs::path(older) / "version.json") << R"({"cuda": {"name": "CUDA SDK", "version": "12.9.0"}})";
  const std::string bare = fake_toolkit(dir.path() / "cuda-bare", "12.9");
  const std::string right = fake_toolkit(dir.path() / "cuda-12.9.1", "12.9");
  std::ofstream(fs::path(right) / "version.json") << R"({"cuda": {"name": "CUDA SDK", "version": "12.9.1"}})";
  HostToolchains t;
  t.cuda[V("12.9")] = older;
  HostProbe probe(runner, t, {{"CUDA_HOME", bare}, {"CUDA_PATH_V12_9", right}});
  const auto [found, tried] = probe.find_toolkit(V("12.9.1"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->home, right);
  EXPECT_EQ(found->version.str(), "12.9.1");  // recorded in the manifest as the toolkit that built
  const std::string message = HostProbe::missing_toolkit(V("12.9.1"), tried);
  EXPECT_THAT(message, HasSubstr(older + " (toolchains/host.yaml): nvcc 12.9, but version.json says release 12.9.0"));
  EXPECT_THAT(message, HasSubstr(bare + " ($CUDA_HOME): nvcc 12.9, but no version.json says its release"));
  // Unpinned, the first 12.9 serves, as before.
  const auto [any, again] = probe.find_toolkit(V("12.9"));
  ASSERT_TRUE(any.has_value());
  EXPECT_EQ(any->home, older);
  EXPECT_EQ(any->version.str(), "12.9");
  EXPECT_EQ(cuda_release_in("{not json"), std::nullopt);
}

TEST_F(Host, WindowsStyleCudaPathVariable) {
  HostProbe probe(runner, {}, {{"CUDA_PATH_V12_6", fake_toolkit(dir.path() / "v126", "12.6")}});
  const auto [found, tried] = probe.find_toolkit(V("12.6"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->home, (dir.path() / "v126").string());
}

TEST_F(Host, TheRealToolkitOfThisMachine) {
  if (!fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no CUDA toolkit here";
  HostProbe probe(runner, {}, {});
  // Whatever the installed release is, asking for it finds it and asking for 11.0 does not.
  const std::vector<Probe> first = probe.find_toolkit(V("11.0")).tried;
  const std::string outcome = first.back().outcome;  // "/usr/local/cuda: nvcc X.Y"
  ASSERT_THAT(outcome, HasSubstr("nvcc "));
  const auto [found, tried] = probe.find_toolkit(V(outcome.substr(5).c_str()));
  ASSERT_TRUE(found.has_value()) << outcome;
  EXPECT_TRUE(fs::exists(found->nvcc));
}

TEST_F(Host, PythonFromPyenvNewestPatchFirst) {
  const fs::path pyenv = dir.path() / "pyenv";
  for (const char* v : {"3.12.1", "3.12.10", "3.11.7"}) {
    fs::create_directories(pyenv / "versions" / v / "bin");
    const std::string minor = std::string(v).substr(0, 4);
    const fs::path exe = pyenv / "versions" / v / "bin" / ("python" + minor);
    std::ofstream(exe) << "#!/bin/sh\necho " << minor << "\n";
    fs::permissions(exe, fs::perms::owner_all);
  }
  HostProbe probe(runner, {}, {{"PYENV_ROOT", pyenv.string()}, {"PATH", "/nonexistent"}});
  const auto [found, tried] = probe.find_python(*PythonTag::parse("cp312"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->path, (pyenv / "versions/3.12.10/bin/python3.12").string());
}

// A launcher in front of the interpreter (a pyenv shim, ~0.5 s a start) is probed once: the
// interpreter found is the executable it runs.
TEST_F(Host, PythonBehindALauncherIsTheExecutableItRuns) {
  const fs::path real = dir.path() / "versions" / "python3.12";
  fs::create_directories(real.parent_path());
  std::ofstream(real) << "#!/bin/sh\necho 3.12\n";
  fs::permissions(real, fs::perms::owner_all);
  const fs::path shim = dir.path() / "shims" / "python3.12";
  fs::create_directories(shim.parent_path());
  std::ofstream(shim) << "#!/bin/sh\necho 3.12\necho " << real.string() << "\n";
  fs::permissions(shim, fs::perms::owner_all);
  HostProbe probe(runner, {}, {{"PATH", shim.parent_path().string()}, {"HOME", dir.path().string()}});
  const auto [found, tried] = probe.find_python(*PythonTag::parse("cp312"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->path, real.string());
}

// pyenv's shims are launchers for the versions fabuild finds under PYENV_ROOT/versions itself.
TEST_F(Host, PyenvShimsAreNotProbed) {
  const fs::path pyenv = dir.path() / "pyenv";
  fs::create_directories(pyenv / "shims");
  fs::create_directories(pyenv / "versions/3.12.4/bin");
  const fs::path shim = pyenv / "shims/python3.12";
  std::ofstream(shim) << "#!/bin/sh\necho 3.12\n";
  const fs::path exe = pyenv / "versions/3.12.4/bin/python3.12";
  std::ofstream(exe) << "#!/bin/sh\necho 3.12\n";
  for (const auto& p : {shim, exe}) fs::permissions(p, fs::perms::owner_all);
  HostProbe probe(runner, {}, {{"PYENV_ROOT", pyenv.string()}, {"PATH", (pyenv / "shims").string() + "/"}});
  const auto [found, tried] = probe.find_python(*PythonTag::parse("cp312"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->path, exe.string());
  ASSERT_EQ(tried.size(), 1u);
  EXPECT_THAT(tried.front().candidate, HasSubstr("(pyenv)"));
}

// ...but only when what it names exists.
TEST_F(Host, PythonNamingAMissingExecutableKeepsItsOwnPath) {
  const fs::path shim = dir.path() / "python3.12";
  std::ofstream(shim) << "#!/bin/sh\necho 3.12\necho /nonexistent/python3.12\n";
  fs::permissions(shim, fs::perms::owner_all);
  HostProbe probe(runner, {}, {{"PATH", dir.path().string()}, {"HOME", dir.path().string()}});
  const auto [found, tried] = probe.find_python(*PythonTag::parse("cp312"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->path, shim.string());
}

TEST_F(Host, PythonThatLiesAboutItsVersionIsSkipped) {
  const fs::path liar = dir.path() / "python3.12";
  std::ofstream(liar) << "#!/bin/sh\necho 3.11\n";
  fs::permissions(liar, fs::perms::owner_all);
  HostToolchains t;
  t.python["cp312"] = liar.string();
  HostProbe probe(runner, t, {{"PATH", "/nonexistent"}, {"HOME", dir.path().string()}});
  const auto [answer, tried] = probe.find_python(*PythonTag::parse("cp312"));
  EXPECT_FALSE(answer.has_value());
  const std::string message = HostProbe::missing_python(*PythonTag::parse("cp312"), tried);
  EXPECT_THAT(message, HasSubstr(liar.string() + " (toolchains/host.yaml): python 3.11"));
  EXPECT_THAT(message, HasSubstr("python3.12 on PATH: missing"));
  EXPECT_THAT(message, HasSubstr("`pyenv install 3.12`"));
}

TEST_F(Host, TheRealPythonsOfThisMachine) {
  const char* home = std::getenv("HOME");
  const char* path = std::getenv("PATH");
  HostProbe probe(runner, {}, {{"HOME", home ? home : ""}, {"PATH", path ? path : ""}});
  const auto [found, tried] = probe.find_python(*PythonTag::parse("cp311"));
  if (!found) GTEST_SKIP() << "no Python 3.11 here: " << HostProbe::missing_python(*PythonTag::parse("cp311"), tried);
  EXPECT_EQ(found->tag.str(), "cp311");
}

TEST_F(Host, ToolchainsFile) {
  const fs::path file = dir.path() / "host.yaml";
  std::ofstream(file) << "cuda:\n  \"12.8\": /opt/cuda-12.8\npython:\n  \"3.12\": /opt/py/bin/python3.12\n";
  const HostToolchains t = load_host_toolchains(file.string());
  EXPECT_EQ(t.cuda.at(V("12.8")), "/opt/cuda-12.8");
  EXPECT_EQ(t.python.at("cp312"), "/opt/py/bin/python3.12");
  EXPECT_TRUE(load_host_toolchains((dir.path() / "none.yaml").string()).cuda.empty());
  std::ofstream(file) << "cuda:\n  \"12.8\": /opt/cuda-12.8\npyhton: {}\n";
  try {
    load_host_toolchains(file.string());
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().str(), file.string() + ":3:1");
    EXPECT_THAT(e.message(), HasSubstr("unknown key 'pyhton' in toolchains/host.yaml (did you mean 'python'?)"));
  }
}

}  // namespace
}  // namespace fabuild
