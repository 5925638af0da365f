#include "provision/pip_toolkit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../support/scratch_dir.h"
#include "provision/pip_config.h"
#include "provision/toolkit_choice.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Version V(const char* s) { return *Version::parse(s); }

// A host toolkit whose nvcc prints what the real one prints for `release`.
std::string fake_toolkit(const fs::path& root, const std::string& release) {
  fs::create_directories(root / "bin");
  const fs::path nvcc = root / "bin" / "nvcc";
  std::ofstream(nvcc) << "#!/bin/sh\necho 'Cuda compilation tools, release " << release << ", V" << release << ".41'\n";
  fs::permissions(nvcc, fs::perms::owner_all);
  return root.string();
}

// What a completed PyPI install leaves: the tree and its marker.
void fake_pip_install(const PipToolkit& tk, const std::string& nvcc_build) {
  fs::create_directories(tk.nvcc().parent_path());
  std::ofstream(tk.nvcc()) << "#!/bin/sh\n";
  std::ofstream(tk.dir() / ".fabuild-toolkit.json")
      << R"({"cuda": ")" << tk.cuda.str() << R"(", "nvcc": ")" << nvcc_build << R"(", "packages": {}})";
}

class ToolkitChoices : public ::testing::Test {
 protected:
  test::ScratchDir dir{"fabuild-toolkit-choice"};
  ProcessCommandRunner runner;
  fs::path root = dir.path() / "toolkits";
};

TEST_F(ToolkitChoices, PipToolkitLayout) {
  const PipToolkit tk{V("13.2"), "/cache/toolkits"};
  EXPECT_EQ(tk.dir(), "/cache/toolkits/cuda-13.2");
  EXPECT_EQ(tk.cuda_home(), "/cache/toolkits/cuda-13.2/nvidia/cu13");
  EXPECT_EQ(tk.nvcc(), "/cache/toolkits/cuda-13.2/nvidia/cu13/bin/nvcc");
  EXPECT_THAT(tk.requirements(),
              ElementsAre("nvidia-cuda-nvcc==13.2.*", "nvidia-nvvm==13.2.*", "nvidia-cuda-crt==13.2.*",
                          "nvidia-cuda-runtime==13.2.*", "nvidia-cuda-cccl==13.2.*"));
}

TEST_F(ToolkitChoices, AutoTakesTheHostsFirst) {
  HostToolchains t;
  t.cuda[V("13.7")] = fake_toolkit(dir.path() / "cuda137", "13.7");
  HostProbe probe(runner, t, {});
  const ToolkitChoice c = choose_toolkit(probe, V("13.7"), ToolkitSource::kAuto, root);
  ASSERT_TRUE(c.toolkit.has_value());
  EXPECT_EQ(c.toolkit->origin, "host");
  EXPECT_EQ(c.toolkit->build, "13.7.41");
  EXPECT_FALSE(c.install.has_value());
  EXPECT_EQ(c.describe(), "host " + (dir.path() / "cuda137").string() + " (nvcc 13.7.41)");
}

TEST_F(ToolkitChoices, AutoWithoutAHostToolkitInstallsPypis) {
  HostProbe probe(runner, {}, {});
  const ToolkitChoice c = choose_toolkit(probe, V("13.7"), ToolkitSource::kAuto, root);
  ASSERT_TRUE(c.install.has_value());
  ASSERT_TRUE(c.toolkit.has_value());
  EXPECT_EQ(c.toolkit->origin, "pip");
  EXPECT_EQ(c.toolkit->home, (root / "cuda-13.7/nvidia/cu13").string());
  EXPECT_THAT(c.describe(), HasSubstr("PyPI: nvidia-cuda-nvcc==13.7.* nvidia-nvvm==13.7.*"));
  EXPECT_THAT(c.tried.front().candidate, HasSubstr("/usr/local/cuda-13.7"));  // the host was looked at first

  fake_pip_install(PipToolkit{V("13.7"), root}, "13.7.55");  // an earlier run installed it
  const ToolkitChoice again = choose_toolkit(probe, V("13.7"), ToolkitSource::kAuto, root);
  EXPECT_FALSE(again.install.has_value());
  ASSERT_TRUE(again.toolkit.has_value());
  EXPECT_EQ(again.toolkit->build, "13.7.55");
  EXPECT_THAT(again.describe(), HasSubstr("PyPI, installed in"));
}

TEST_F(ToolkitChoices, PipIgnoresTheHostAndHostIgnoresPypi) {
  HostToolchains t;
  t.cuda[V("13.7")] = fake_toolkit(dir.path() / "cuda137", "13.7");
  HostProbe probe(runner, t, {});
  EXPECT_TRUE(choose_toolkit(probe, V("13.7"), ToolkitSource::kPip, root).install.has_value());

  HostProbe bare(runner, {}, {});
  const ToolkitChoice host = choose_toolkit(bare, V("13.8"), ToolkitSource::kHost, root);
  ASSERT_FALSE(host.toolkit.has_value());
  EXPECT_THAT(host.toolkit.error().what, HasSubstr("no CUDA 13.8 toolkit on this host"));
  EXPECT_THAT(host.toolkit.error().what,
              HasSubstr("or let fabuild install NVIDIA's packages from PyPI (toolkit: auto or pip)"));
}

// PyPI's CUDA 12 packages hold ptxas only: a 12.x set needs a host toolkit or a container.
TEST_F(ToolkitChoices, Cuda12HasNoPypiCompiler) {
  HostProbe probe(runner, {}, {});
  const ToolkitChoice c = choose_toolkit(probe, V("12.7"), ToolkitSource::kAuto, root);
  ASSERT_FALSE(c.toolkit.has_value());
  EXPECT_FALSE(c.install.has_value());
  const std::string& why = c.toolkit.error().what;
  EXPECT_THAT(why, HasSubstr("/usr/local/cuda-12.7: no /usr/local/cuda-12.7/bin/nvcc"));
  EXPECT_THAT(why, HasSubstr("PyPI has no CUDA 12.x compiler (its 12.x packages carry ptxas only)"));
  EXPECT_THAT(why, HasSubstr("or build in a container from an image with CUDA 12.7 (provision: container)"));
}

TEST_F(ToolkitChoices, ADamagedMarkerIsNoInstall) {
  const PipToolkit tk{V("13.7"), root};
  fake_pip_install(tk, "13.7.55");
  std::ofstream(tk.dir() / ".fabuild-toolkit.json") << "{not json";
  EXPECT_FALSE(installed_pip_toolkit(tk).has_value());
  fs::remove(tk.dir() / ".fabuild-toolkit.json");
  EXPECT_FALSE(installed_pip_toolkit(tk).has_value());
}

// `pip config list` as pip 23 prints it: sorted, its variables (:env:) over its files'
// [install] over [global]; a list from a file with its newlines written out as \n.
TEST(PipConfig, ReadsWhatPipSays) {
  const PipConfig c = parse_pip_config(
      ":env:.find-links='/opt/wheels'\n"
      ":env:.index-url='https://env.invalid/simple'\n"
      ":env:.trusted-host='a.invalid'\n"
      "global.cert='/etc/ssl/certs/ca-certificates.crt'\n"
      "global.extra-index-url='https://ignored.invalid/simple'\n"
      "global.index-url='https://mirror.invalid/simple'\n"
      "global.timeout='60'\n"
      "install.extra-index-url='\\nhttps://a.invalid/simple\\nhttps://b.invalid/simple'\n"
      "other.index-url='https://ignored.invalid'\n");
  EXPECT_EQ(c.index_url, "https://env.invalid/simple");
  EXPECT_THAT(c.extra_index_urls, ElementsAre("https://a.invalid/simple", "https://b.invalid/simple"));
  EXPECT_THAT(c.find_links, ElementsAre("/opt/wheels"));
  EXPECT_EQ(c.cert, "/etc/ssl/certs/ca-certificates.crt");
  EXPECT_THAT(uv_index_args(c), ElementsAre("--index-url", "https://env.invalid/simple", "--extra-index-url",
                                            "https://a.invalid/simple", "--extra-index-url", "https://b.invalid/simple",
                                            "--find-links", "/opt/wheels", "--allow-insecure-host", "a.invalid"));
  // A command line's own --index-url (torch_index) takes the configured one's place.
  EXPECT_EQ(uv_index_args(c, true).front(), "--extra-index-url");
  EXPECT_THAT(uv_env(c), ElementsAre(std::make_pair(std::string("SSL_CERT_FILE"), c.cert)));
  EXPECT_TRUE(parse_pip_config("").extra_index_urls.empty());
  EXPECT_TRUE(parse_pip_config(":env:.no-index='true'\n").no_index);
}

}  // namespace
}  // namespace fabuild
