// The container site of a cell (app/container_site.cpp) against a scripted engine: what fabuild
// asks docker (found on PATH, the image, then the image's toolkit, Python and compiler through
// `docker run`) answered from a table, with no engine and no process.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "../support/fake_system.h"
#include "../support/scratch_dir.h"
#include "app/plan.h"
#include "app/site_build.h"
#include "util/text.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// docker as a table: the engine answers, one image (img:1, amd64) is present, and a `docker run`
// of it answers for nvcc, version.json, Python and c++. Every argv asked is kept.
class ScriptedEngine : public CommandRunner {
 public:
  std::string version_json;  // "": the image has none
  std::vector<std::string> asked;

  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>&,
                    std::chrono::milliseconds) override {
    const std::string line = join(argv, " ");
    asked.push_back(line);
    CommandResult r;
    if (argv.size() > 1 && argv[1] == "version") {
      r.output = "28.2.2\n";
    } else if (argv.size() > 1 && argv[1] == "ps") {
      r.output = "";
    } else if (argv.size() > 2 && argv[1] == "image" && argv[2] == "inspect") {
      if (argv.back() == "img:1") {
        r.output =
            R"({"Id": "sha256:0123456789abcdef", "Architecture": "amd64", "Config": {"Env": ["PATH=/usr/bin"]}})";
      } else {
        r.status.code = 1;
      }
    } else if (argv.size() > 1 && argv[1] == "run") {
      r = in_image(argv);
    } else {
      r.status.code = 1;
    }
    return r;
  }

 private:
  CommandResult in_image(const std::vector<std::string>& argv) const {
    CommandResult r;
    const auto entry = std::find(argv.begin(), argv.end(), "--entrypoint");
    const std::string program = entry + 1 < argv.end() ? *(entry + 1) : "";
    const std::vector<std::string> args(entry + 3 < argv.end() ? entry + 3 : argv.end(), argv.end());
    if (program == "/usr/local/cuda/bin/nvcc") {
      r.output = "Cuda compilation tools, release 12.9, V12.9.86\n";
    } else if (program == "cat" && !args.empty() && args[0] == "/usr/local/cuda/version.json" &&
               !version_json.empty()) {
      r.output = version_json;
    } else if (program.find("python") != std::string::npos && !args.empty() && args[0] == "-c" &&
               args[1].find("version_info") != std::string::npos) {
      r.output = "3.12\n";
    } else if (program == "/usr/bin/env") {
      r.output = "c++ (GCC) 13.3.1\n";
    } else {
      r.status.code = 1;
      r.output = program + ": not found\n";
    }
    return r;
  }
};

class ContainerSite : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path();
    const fs::path docker = root_ / "bin" / "docker";
    fs::create_directories(docker.parent_path());
    std::ofstream(docker) << "#!/bin/sh\nexit 99\n";  // found on PATH, never run: the table answers
    fs::permissions(docker, fs::perms::owner_all);
    fs::create_directories(root_ / "src");
    std::ofstream(root_ / "src" / "setup.py") << "# a source tree\n";
    engine_ = std::make_shared<ScriptedEngine>();
    system_ = testing::fake_system(root_ / "cache", 8, 32);
    system_.env = Environment{{"PATH", (root_ / "bin").string()}, {"HOME", (root_ / "home").string()}};
    system_.commands = engine_;
  }

  SiteBuild site_for(const std::string& cuda) {
    const fs::path matrix = root_ / "m.yaml";
    std::ofstream(matrix) << "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"" << cuda
                          << "\"]\npython: [cp312]\nprovision: container\n"
                             "container: {images: [\"img:1\"], network: none}\nsource: {path: "
                          << (root_ / "src").string() << "}\ntorch_index: https://torch-index.invalid/whl\n";
    Options o;
    o.matrix = matrix.string();
    o.output_dir = (root_ / "wheelhouse").string();
    return plan_site_build(make_plan(o, system_), {0}, false, system_);
  }

  test::ScratchDir dir_{"app-container-site"};
  fs::path root_;
  std::shared_ptr<ScriptedEngine> engine_;
  System system_;
};

// nvcc says "release 12.9" whatever the release: a pinned 12.9.1 takes only an image whose
// version.json says 12.9.1, as a host toolkit is taken (host.cpp).
TEST_F(ContainerSite, APinnedToolkitReleaseIsCheckedAgainstTheImagesVersionJson) {
  engine_->version_json = R"({"cuda": {"name": "CUDA SDK", "version": "12.9.0"}})";
  const SiteBuild wrong = site_for("12.9.1");
  ASSERT_EQ(wrong.settled.size(), 1u);
  EXPECT_EQ(wrong.settled[0].step, "toolkit");
  EXPECT_THAT(wrong.settled[0].message, HasSubstr("the image's CUDA toolkit at /usr/local/cuda is not release 12.9.1 "
                                                  "(/usr/local/cuda/version.json: release 12.9.0)"));
  EXPECT_THAT(wrong.settled[0].message, HasSubstr("name the series (\"12.9\")"));

  engine_->version_json = R"({"cuda": {"name": "CUDA SDK", "version": "12.9.1"}})";
  const SiteBuild right = site_for("12.9.1");
  EXPECT_TRUE(right.settled.empty()) << right.settled[0].message;
  EXPECT_EQ(right.cells.size(), 1u);

  engine_->version_json.clear();
  const SiteBuild none = site_for("12.9.1");
  ASSERT_EQ(none.settled.size(), 1u);
  EXPECT_THAT(none.settled[0].message, HasSubstr("(/usr/local/cuda/version.json: none)"));
}

// A series takes the image's toolkit of that series and never asks for its release.
TEST_F(ContainerSite, ASeriesTakesTheImagesToolkitWithoutItsRelease) {
  const SiteBuild b = site_for("12.9");
  EXPECT_TRUE(b.settled.empty()) << b.settled[0].message;
  ASSERT_EQ(b.cells.size(), 1u);
  for (const auto& line : engine_->asked) EXPECT_THAT(line, ::testing::Not(HasSubstr("version.json")));
}

}  // namespace
}  // namespace fabuild
