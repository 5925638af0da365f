#include "provision/torch_releases.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "../support/scratch_dir.h"
#include "util/environment.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace std::chrono_literals;

Version V(const char* s) { return *Version::parse(s); }
TorchRelease R(const char* version, const char* cuda, std::string tag = "") {
  return {V(version), V(cuda), std::move(tag), *PythonTag::parse("cp312")};
}

CommandResult exited(int code, std::string output) {
  CommandResult r;
  r.status.code = code;
  r.output = std::move(output);
  return r;
}

// Plays the interpreter: `pip config list` prints `pip_config`; the program lists `listed[tag]`
// for each source and answers `builds` with `build_of`, as py/torch_releases.py prints them. A
// test sets `list_answer` or `builds_answer` to have that run fail instead.
class FakePython : public CommandRunner {
 public:
  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>&,
                    std::chrono::milliseconds timeout) override {
    calls.push_back(argv);
    timeouts.push_back(timeout);
    if (argv.at(3) == "config") return exited(0, pip_config);
    const std::string& mode = argv.at(3);
    if (mode == "list" && list_answer) return *list_answer;
    if (mode == "builds" && builds_answer) return *builds_answer;
    json sources = json::array();
    const json request = json::parse(argv.at(4));
    for (const json& s : request["sources"]) {
      const std::string tag = s["tag"];
      json answer = {{"tag", tag}};
      if (mode == "list") answer["versions"] = listed[tag];
      for (const json& v : s.value("versions", json::array()))
        answer["builds"][v.get<std::string>()] = build_of.at(v.get<std::string>());
      sources.push_back(answer);
    }
    return exited(0, "<string>:1: DeprecationWarning: a note before the answer\n" + json{{"sources", sources}}.dump());
  }

  // The requests of the program's runs in `mode`.
  [[nodiscard]] std::vector<json> requests(const std::string& mode) const {
    std::vector<json> out;
    for (const auto& argv : calls) {
      if (argv.at(3) == mode) out.push_back(json::parse(argv.at(4)));
    }
    return out;
  }
  // The versions the last `builds` run asked of source `i`.
  [[nodiscard]] std::vector<std::string> asked(std::size_t i = 0) const {
    return requests("builds").back()["sources"][i]["versions"].get<std::vector<std::string>>();
  }

  std::string pip_config;
  std::map<std::string, std::vector<std::string>> listed;
  std::map<std::string, std::string> build_of;
  std::optional<CommandResult> list_answer, builds_answer;
  std::vector<std::vector<std::string>> calls;
  std::vector<std::chrono::milliseconds> timeouts;
};

class TorchReleases : public ::testing::Test {
 protected:
  TorchReleases() {
    query.python = "/usr/bin/python3.12";
    query.python_tag = *PythonTag::parse("cp312");
    query.from = V("2.10");
    python.listed[""] = {"2.12.1", "2.12.0", "2.11.0", "2.10.0", "2.9.1"};
    python.build_of = {{"2.12.1", "13.0"}, {"2.11.0", "13.0"}, {"2.10.0", "12.8"}, {"2.13.0", "13.2"}};
  }
  test::ScratchDir dir{"fabuild-torch-releases"};
  fs::path cache = dir.path() / "cache" / "torch-releases.json";
  FakePython python;
  TorchIndexQuery query;
};

TEST_F(TorchReleases, TheNewestOfEachSeriesFromTheFloorWithItsCudaBuild) {
  const auto releases = list_torch_releases(python, query, cache);
  ASSERT_TRUE(releases) << releases.error().message();
  EXPECT_THAT(*releases, ElementsAre(R("2.10.0", "12.8"), R("2.11.0", "13.0"), R("2.12.1", "13.0")));
  // Only the newest of a series, and none below the floor, is asked for its build.
  EXPECT_THAT(python.asked(), ElementsAre("2.10.0", "2.11.0", "2.12.1"));

  // pip's configured index is pip's: the program gets no index arguments, and the interpreter's pip answers.
  const json list = python.requests("list").at(0);
  EXPECT_EQ(list["sources"][0]["args"], json::array());
  EXPECT_EQ(list["python_version"], "3.12");
  EXPECT_FALSE(list.contains("abi"));
  EXPECT_EQ(list["platforms"][0], "manylinux_2_28_x86_64");
  EXPECT_EQ(list["timeout"], 120);
  EXPECT_EQ(python.requests("builds").at(0)["timeout"], 180);
  ASSERT_EQ(python.calls.size(), 3u);
  EXPECT_THAT(python.calls[0], ElementsAre("/usr/bin/python3.12", "-m", "pip", "config", "list"));
  EXPECT_EQ(python.calls[1].at(0), "/usr/bin/python3.12");
  EXPECT_THAT(python.calls[1].at(2), HasSubstr("pip index versions torch"));  // the embedded program
  EXPECT_EQ(python.timeouts[1], 150s);                                        // one listing and its slack
}

TEST_F(TorchReleases, BuildsAreKeptSoThatOnlyNewVersionsAreAsked) {
  ASSERT_TRUE(list_torch_releases(python, query, cache));
  EXPECT_THAT(test::ScratchDir::read(cache), HasSubstr("pip index-url=(default) linux_x86_64"));

  python.listed[""].insert(python.listed[""].begin(), "2.13.0");  // published overnight
  const auto releases = list_torch_releases(python, query, cache);
  ASSERT_TRUE(releases) << releases.error().message();
  EXPECT_THAT(*releases,
              ElementsAre(R("2.10.0", "12.8"), R("2.11.0", "13.0"), R("2.12.1", "13.0"), R("2.13.0", "13.2")));
  EXPECT_EQ(python.requests("list").size(), 2u);  // the list is asked every time
  EXPECT_THAT(python.asked(), ElementsAre("2.13.0"));

  const std::size_t runs = python.requests("builds").size();
  ASSERT_TRUE(list_torch_releases(python, query, cache));
  EXPECT_EQ(python.requests("builds").size(), runs);  // nothing new: no metadata is read

  // Another platform's builds are its own.
  query.platform = Platform::kLinuxAarch64;
  ASSERT_TRUE(list_torch_releases(python, query, cache));
  EXPECT_THAT(python.asked(), ElementsAre("2.10.0", "2.11.0", "2.12.1", "2.13.0"));
  EXPECT_EQ(python.requests("builds").back()["platforms"][0], "manylinux_2_28_aarch64");
}

TEST_F(TorchReleases, AnotherPipIndexIsAnotherCache) {
  ASSERT_TRUE(list_torch_releases(python, query, cache));
  python.pip_config = "global.index-url='https://mirror.invalid/simple'\n";
  ASSERT_TRUE(list_torch_releases(python, query, cache));
  EXPECT_EQ(python.requests("builds").size(), 2u);
  EXPECT_THAT(test::ScratchDir::read(cache), HasSubstr("pip index-url=https://mirror.invalid/simple linux_x86_64"));
}

TEST_F(TorchReleases, CpuAndRocmBuildsAreLeftOutAndNotAskedAgain) {
  python.build_of["2.11.0"] = "cpu";
  python.build_of["2.12.1"] = "rocm";
  const auto releases = list_torch_releases(python, query, cache);
  ASSERT_TRUE(releases) << releases.error().message();
  EXPECT_THAT(*releases, ElementsAre(R("2.10.0", "12.8")));
  ASSERT_TRUE(list_torch_releases(python, query, cache));
  EXPECT_EQ(python.requests("builds").size(), 1u);
}

TEST_F(TorchReleases, APipFailureNamesItAndSaysWhatToDo) {
  python.list_answer = exited(1,
                              "fabuild: pip index versions torch failed (exit 1):\n"
                              "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError'\n"
                              "ERROR: No matching distribution found for torch\n");
  auto releases = list_torch_releases(python, query, cache);
  ASSERT_FALSE(releases);
  EXPECT_THAT(releases.error().what, HasSubstr("cannot list the torch releases of pip's configured index for cp312 "
                                               "linux_x86_64: exit 1: pip index versions torch failed (exit 1):"));
  EXPECT_THAT(releases.error().what, HasSubstr("No matching distribution found for torch"));
  EXPECT_THAT(releases.error().hint, HasSubstr("name the torch series in the matrix instead of a range"));

  // pip's five retries of one unreachable host, and its banner, read as one line each or none.
  std::string retries =
      "fabuild: pip index versions torch failed (exit 1):\n"
      "WARNING: pip index is currently an experimental command. It may be removed.\n";
  for (int left = 4; left >= 0; --left) {
    retries += fmt::format(
        "WARNING: Retrying (Retry(total={}, connect=None)) after connection broken by 'NewConnectionError(<x at "
        "0x7f{}>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': "
        "/simple/torch/\n",
        left, left);
  }
  python.list_answer = exited(1, retries + "ERROR: No matching distribution found for torch\n");
  releases = list_torch_releases(python, query, cache);
  ASSERT_FALSE(releases);
  EXPECT_THAT(releases.error().what, HasSubstr("exit 1): | WARNING: Retrying (Retry(total=4, connect=None)) after "));
  EXPECT_THAT(releases.error().what, HasSubstr("name resolution')': /simple/torch/ (4 more retries) | ERROR: No "
                                               "matching distribution found for torch"));
  EXPECT_THAT(releases.error().what, Not(HasSubstr("total=3")));
  EXPECT_THAT(releases.error().what, Not(HasSubstr("experimental")));

  python.list_answer.reset();
  python.builds_answer = exited(1, "fabuild: pip install --dry-run torch==2.12.1 failed (exit 1):\nERROR: HTTP 503\n");
  releases = list_torch_releases(python, query, cache);
  ASSERT_FALSE(releases);
  EXPECT_THAT(releases.error().what,
              HasSubstr("pip install --dry-run torch==2.12.1 failed (exit 1): | ERROR: HTTP 503"));
  EXPECT_FALSE(fs::exists(cache));  // nothing was learnt

  python.builds_answer = exited(0, "Traceback (most recent call last):\n");
  releases = list_torch_releases(python, query, cache);
  ASSERT_FALSE(releases);
  EXPECT_THAT(releases.error().what, HasSubstr("the program printed no answer: Traceback"));
}

TEST_F(TorchReleases, APyTorchStyleIndexIsAskedPerSubIndexAndItsLabelsNameTheBuild) {
  query.torch_index = "https://user:secret@torch-index.invalid/whl/";
  query.index_tags = {"cu128", "cu130"};
  python.listed = {{"cu128", {"2.11.0+cu128", "2.10.0+cu128"}}, {"cu130", {"2.11.0+cu130"}}};
  python.build_of = {{"2.11.0+cu128", "12.8"}, {"2.10.0+cu128", "12.8"}, {"2.11.0+cu130", "13.0"}};
  const auto releases = list_torch_releases(python, query, cache);
  ASSERT_TRUE(releases) << releases.error().message();
  EXPECT_THAT(*releases,
              ElementsAre(R("2.10.0", "12.8", "cu128"), R("2.11.0", "12.8", "cu128"), R("2.11.0", "13.0", "cu130")));
  const json list = python.requests("list").at(0);
  EXPECT_EQ(list["sources"][1]["args"],
            json::array({"--index-url", "https://user:secret@torch-index.invalid/whl/cu130"}));
  EXPECT_EQ(python.calls.front().at(3), "list");  // pip's own configuration plays no part
  const std::string kept = test::ScratchDir::read(cache);
  EXPECT_THAT(kept, HasSubstr("url https://torch-index.invalid/whl/cu130 linux_x86_64"));
  EXPECT_THAT(kept, Not(HasSubstr("secret")));

  query.index_tags.clear();
  EXPECT_THAT(list_torch_releases(python, query, cache).error().what,
              HasSubstr("no CUDA build (cu130, ...) was named"));
}

TEST_F(TorchReleases, ACacheThatIsNotOursIsReplaced) {
  fs::create_directories(cache.parent_path());
  std::ofstream(cache) << "{\"format\": 0, \"indexes\": []}";
  ASSERT_TRUE(list_torch_releases(python, query, cache));
  EXPECT_THAT(python.asked(), ElementsAre("2.10.0", "2.11.0", "2.12.1"));
  EXPECT_EQ(json::parse(test::ScratchDir::read(cache))["format"], 1);
}

TEST_F(TorchReleases, TheAnswersOfAWheelDirectoryThatIsGoneAreDropped) {
  fs::create_directories(cache.parent_path());
  const fs::path kept = dir.path() / "wheels";
  fs::create_directories(kept);
  std::ofstream(cache) << json{{"format", 1},
                               {"indexes",
                                {{"dir " + (dir.path() / "gone").string() + " linux_x86_64", {{"2.11.0", "13.0"}}},
                                 {"dir " + kept.string() + " linux_x86_64", {{"2.11.0", "13.0"}}}}}}
                              .dump();
  ASSERT_TRUE(list_torch_releases(python, query, cache));  // asks pip's index, and writes what it learnt
  const json indexes = json::parse(test::ScratchDir::read(cache))["indexes"];
  EXPECT_FALSE(indexes.contains("dir " + (dir.path() / "gone").string() + " linux_x86_64"));
  EXPECT_TRUE(indexes.contains("dir " + kept.string() + " linux_x86_64"));
  EXPECT_TRUE(indexes.contains("pip index-url=(default) linux_x86_64"));
}

TEST_F(TorchReleases, AFreeThreadedPythonAsksForItsAbi) {
  query.python_tag = *PythonTag::parse("cp313t");
  ASSERT_TRUE(list_torch_releases(python, query, cache));
  EXPECT_EQ(python.requests("list").at(0)["python_version"], "3.13");
  EXPECT_EQ(python.requests("list").at(0)["abi"], "cp313t");
}

TEST_F(TorchReleases, AWheelDirectoryMustBeThere) {
  query.torch_index = (dir.path() / "no-such-wheels").string();
  const auto releases = list_torch_releases(python, query, cache);
  ASSERT_FALSE(releases);
  EXPECT_THAT(releases.error().what, HasSubstr("no-such-wheels is not a directory"));
  EXPECT_THAT(python.calls, IsEmpty());
}

// The program itself, with this machine's python3 and its pip, on stand-in torch wheels that hold
// only their METADATA: pip lists them, reads their dependencies, and its label where there is one.
TEST(TorchReleasesProgram, ListsAWheelDirectoryWithRealPip) {
  const Environment self = Environment::of_this_process();
  const std::string python3 = self.find_program("python3");
  ProcessCommandRunner runner;
  if (python3.empty() || !runner.run({python3, "-m", "pip", "--version"}, self.entries(), 60s).ok()) {
    GTEST_SKIP() << "python3 has no pip";
  }
  test::ScratchDir dir{"fabuild-torch-releases-real"};
  const fs::path wheels = dir.path() / "wheels";
  fs::create_directories(wheels);
  const char* make = R"(
import json, os, sys, zipfile
for version, requires in json.loads(sys.argv[2]).items():
    info = f"torch-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    wheel = "Wheel-Version: 1.0\nGenerator: fabuild-test\nRoot-Is-Purelib: false\nTag: cp312-cp312-manylinux_2_28_x86_64\n"
    with zipfile.ZipFile(os.path.join(sys.argv[1], f"torch-{version}-cp312-cp312-manylinux_2_28_x86_64.whl"), "w") as z:
        z.writestr(f"{info}/METADATA", meta)
        z.writestr(f"{info}/WHEEL", wheel)
        z.writestr(f"{info}/RECORD", f"{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n")
)";
  const json stand_ins = {{"2.9.0", {"nvidia-cuda-runtime-cu12==12.8.90; platform_system == \"Linux\""}},
                          {"2.10.0", {"nvidia-cuda-runtime-cu12==12.6.77; platform_system == \"Linux\""}},
                          {"2.10.1", {"filelock", "nvidia-cuda-runtime-cu12==12.8.90; platform_system == \"Linux\""}},
                          {"2.11.0", {"nvidia-cuda-runtime==13.0.96; platform_system == \"Linux\""}},
                          {"2.12.0", {"filelock"}},  // a CPU build
                          {"2.15.0", {"cuda-toolkit[cublas,cudart]==13.2.*; platform_system == \"Linux\""}},
                          {"2.16.0+cu130", json::array()}};
  ASSERT_TRUE(runner.run({python3, "-c", make, wheels.string(), stand_ins.dump()}, self.entries(), 60s).ok());

  // pip reads no configuration of this machine's: only the directory counts.
  Environment env = self.only([](const std::string& name) { return !name.starts_with("PIP_"); });
  env.set("PIP_CONFIG_FILE", "/dev/null");
  env.set("PIP_NO_CACHE_DIR", "1");
  TorchIndexQuery query{
      python3, env.entries(), wheels.string(), {}, Platform::kLinuxX86_64, *PythonTag::parse("cp312"), V("2.10")};
  const auto releases = list_torch_releases(runner, query, dir.path() / "cache.json");
  ASSERT_TRUE(releases) << releases.error().message();
  EXPECT_THAT(*releases,
              ElementsAre(R("2.10.1", "12.8"), R("2.11.0", "13.0"), R("2.15.0", "13.2"), R("2.16.0", "13.0")));
  const std::string kept = test::ScratchDir::read(dir.path() / "cache.json");
  EXPECT_THAT(kept, HasSubstr("\"2.12.0\": \"cpu\""));
  EXPECT_THAT(kept, Not(HasSubstr("2.9.0")));
  EXPECT_THAT(kept, Not(HasSubstr("2.10.0\"")));

  // A Python the directory has no wheel for: no releases, and no failure, for pip reports no other trouble.
  query.python_tag = *PythonTag::parse("cp313");
  const auto none = list_torch_releases(runner, query, dir.path() / "cache.json");
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_THAT(*none, IsEmpty());
}

}  // namespace
}  // namespace fabuild
