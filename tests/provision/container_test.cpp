#include "provision/container.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "../support/scratch_dir.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "util/error.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Answers each argv with what `answer` says; records every call.
class FakeRunner : public CommandRunner {
 public:
  explicit FakeRunner(std::function<CommandResult(const std::vector<std::string>&)> answer)
      : answer_(std::move(answer)) {}
  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>&,
                    std::chrono::milliseconds) override {
    calls.push_back(argv);
    return answer_(argv);
  }
  std::vector<std::vector<std::string>> calls;

 private:
  std::function<CommandResult(const std::vector<std::string>&)> answer_;
};

CommandResult ok(std::string output) { return CommandResult{ExitStatus{}, std::move(output)}; }
CommandResult failed(std::string output) {
  ExitStatus s;
  s.kind = ExitStatus::Kind::kExited;
  s.code = 1;
  return CommandResult{s, std::move(output)};
}

const ContainerEngine kDocker{"/usr/bin/docker", engine_kind("docker"), false};

Cell cell_with(const std::string& extra, const char* cuda = "12.8") {
  return expand(parse_matrix(std::string("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"") + cuda +
                                 "\"]\npython: [cp312]\ntorch_index: https://torch-index.invalid/whl\n" + extra,
                             "m.yaml"))
      .cells.at(0);
}

ContainerSpec spec_of(const std::string& yaml) {
  return parse_matrix("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n" + yaml, "m.yaml")
      .container;
}

TEST(ContainerImages, RecommendedManylinuxBuildersWhenNothingIsNamed) {
  EXPECT_THAT(image_candidates(cell_with(""), {}, {}),
              ElementsAre("pytorch/manylinux2_28-builder:cuda12.8", "sameli/manylinux_2_34_x86_64_cuda_12.8"));
}

TEST(ContainerImages, MatrixBeforeToolchainsFileBeforeDefaults) {
  const std::map<std::string, std::vector<std::string>> toolchains = {{"12.8", {"local/cu128:1"}},
                                                                      {"default", {"local/any:{cuda}"}}};
  EXPECT_THAT(image_candidates(cell_with(""), {}, toolchains), ElementsAre("local/cu128:1"));
  EXPECT_THAT(image_candidates(cell_with("", "12.6"), {}, toolchains), ElementsAre("local/any:12.6"));
  const ContainerSpec spec = spec_of("container:\n  images: {\"12.8\": [\"a/b:{cuda}\", c/d:1]}\n");
  EXPECT_THAT(image_candidates(cell_with(""), spec, toolchains), ElementsAre("a/b:12.8", "c/d:1"));
  // A list (no map) applies to every CUDA set.
  EXPECT_THAT(image_candidates(cell_with("", "12.6"), spec_of("container: {images: [\"x/y:cu{cuda}\"]}\n"), {}),
              ElementsAre("x/y:cu12.6"));
}

// container.images keyed per platform: an aarch64 cell takes its platform's images first.
TEST(ContainerImages, KeyedPerPlatform) {
  const ContainerSpec spec = spec_of(
      "container:\n  images:\n    default: [\"x86/any:{cuda}\"]\n"
      "    linux_aarch64: {\"12.8\": [\"arm/cu128:1\"], default: [\"arm/any:{cuda}\"]}\n");
  EXPECT_THAT(spec.images.at("linux_aarch64/12.8"), ElementsAre("arm/cu128:1"));
  EXPECT_THAT(image_candidates(cell_with(""), spec, {}), ElementsAre("x86/any:12.8"));
  EXPECT_THAT(image_candidates(cell_with("platform: [linux_aarch64]\n"), spec, {}), ElementsAre("arm/cu128:1"));
  EXPECT_THAT(image_candidates(cell_with("platform: [linux_aarch64]\n", "12.6"), spec, {}),
              ElementsAre("arm/any:12.6"));
  // A release takes its series' images unless one is keyed by the release; recommended images
  // are tagged by series.
  EXPECT_THAT(image_candidates(cell_with("platform: [linux_aarch64]\n", "12.8.1"), spec, {}),
              ElementsAre("arm/cu128:1"));
  EXPECT_THAT(image_candidates(cell_with("", "12.9.1"), {}, {}),
              ElementsAre("pytorch/manylinux2_28-builder:cuda12.9", "sameli/manylinux_2_34_x86_64_cuda_12.9"));
}

// The repository's own toolchains/containers.yaml, read as the matrix's container.images is:
// an aarch64 cell gets arm64 builders, never the x86_64-only ones, and {cuda_series} is the
// toolkit's major.minor.
TEST(ContainerImages, TheShippedToolchainsFileHasImagesForEachPlatform) {
  const auto toolchains = load_container_images(std::string(FABUILD_SOURCE_DIR) + "/toolchains/containers.yaml");
  EXPECT_THAT(image_candidates(cell_with("", "12.9.1"), {}, toolchains),
              ElementsAre("fabuild-builder:cuda12.9.1", "pytorch/manylinux2_28-builder:cuda12.9",
                          "sameli/manylinux_2_34_x86_64_cuda_12.9"));
  EXPECT_THAT(image_candidates(cell_with("platform: [linux_aarch64]\n", "12.9.1"), {}, toolchains),
              ElementsAre("fabuild-builder:cuda12.9.1", "pytorch/manylinuxaarch64-builder:cuda12.9"));
  // The matrix takes the same placeholders (docs/containers.md's example).
  const ContainerSpec spec = spec_of(
      "container:\n  images:\n    linux_aarch64: {default: "
      "[\"pytorch/manylinuxaarch64-builder:cuda{cuda_series}\"]}\n");
  EXPECT_THAT(image_candidates(cell_with("platform: [linux_aarch64]\n", "12.8"), spec, {}),
              ElementsAre("pytorch/manylinuxaarch64-builder:cuda12.8"));
}

TEST(ContainerImages, PythonInTheImage) {
  EXPECT_EQ(python_in_image(cell_with(""), {}), "/opt/python/cp312-cp312/bin/python");
  EXPECT_EQ(python_in_image(cell_with(""), spec_of("container: {python: \"/usr/bin/python{python_version}\"}\n")),
            "/usr/bin/python3.12");
}

TEST(ContainerImages, ToolchainsFile) {
  test::ScratchDir dir{"fabuild-containers"};
  const fs::path file = dir.path() / "containers.yaml";
  std::ofstream(file) << "images:\n  \"12.8\": [a:1, b:2]\n  default: c:3\n";
  const auto images = load_container_images(file.string());
  EXPECT_THAT(images.at("12.8"), ElementsAre("a:1", "b:2"));
  EXPECT_THAT(images.at("default"), ElementsAre("c:3"));
  EXPECT_TRUE(load_container_images((dir.path() / "none.yaml").string()).empty());

  std::ofstream(file) << "images:\n  twelve: [a:1]\n";
  try {
    load_container_images(file.string());
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.where().str(), HasSubstr("containers.yaml:2:3"));
    EXPECT_THAT(e.message(), HasSubstr("images is keyed by platform (linux_aarch64), CUDA toolkit version, ROCm set "
                                       "(rocm6.2), 'default' or 'rocm_default', not 'twelve'"));
  }
}

TEST(ContainerSpecLoader, RejectsWhatCannotWork) {
  const auto error_of = [](const std::string& yaml) {
    try {
      spec_of(yaml);
    } catch (const UserError& e) {
      return e.where().str() + ": " + e.message() + " | " + e.hint();
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of("container: {engine: lxc}\n"), HasSubstr("container.engine must be docker, podman or auto"));
  EXPECT_THAT(error_of("container: {pull: sometimes}\n"), HasSubstr("container.pull must be missing, always or never"));
  EXPECT_THAT(error_of("container: {python: python3}\n"), HasSubstr("must be an absolute path in the image"));
  EXPECT_THAT(error_of("container: {python: \"/usr/bin/python{pyver}\"}\n"), HasSubstr("unknown placeholder {pyver}"));
  EXPECT_THAT(error_of("container: {images: [\"a:{cudaa}\"]}\n"), HasSubstr("did you mean 'cuda'"));
  EXPECT_THAT(
      error_of("container: {images: {twelve: [a]}}\n"),
      HasSubstr(
          "keyed by platform (linux_aarch64), CUDA toolkit version, ROCm set (rocm6.2), 'default' or 'rocm_default'"));
  EXPECT_THAT(error_of("container: {toolkit: mine}\n"), HasSubstr("container.toolkit must be image or host"));
  EXPECT_THAT(error_of("container: {network: \"--privileged\"}\n"), HasSubstr("is not a network name"));
  EXPECT_THAT(error_of("container: {imagez: []}\n"), HasSubstr("did you mean 'images'"));
  EXPECT_THAT(error_of("container: {images: [\"--privileged\"]}\n"), HasSubstr("is not an image name"));
}

TEST(ContainerSpecLoader, ReadsEveryKey) {
  const ContainerSpec s = spec_of(
      "container:\n  engine: podman\n  pull: never\n  toolkit: host\n  network: none\n  cuda_home: /opt/cuda\n"
      "  images: {default: [a:1], cu126: [b:2]}\n");
  EXPECT_EQ(s.engine, "podman");
  EXPECT_EQ(s.pull, PullPolicy::kNever);
  EXPECT_TRUE(s.host_toolkit);
  EXPECT_EQ(s.network, "none");
  EXPECT_EQ(s.cuda_home, "/opt/cuda");
  EXPECT_THAT(s.images.at("12.6"), ElementsAre("b:2"));
  EXPECT_EQ(spec_of("container: {engine: auto, network: default}\n").engine, "");
}

constexpr const char* kInspect =
    R"({"Id":"sha256:abc123","RepoDigests":["repo/x@sha256:def"],"Config":{"Env":["PATH=/opt/bin:/usr/bin","LANG=C"]}})";

TEST(ResolveImage, PresentImageIsUsedWithoutPulling) {
  FakeRunner runner([](const auto& argv) { return argv[1] == "image" ? ok(kInspect) : failed("unexpected"); });
  const auto [image, tried] = resolve_image(runner, kDocker, {"repo/x:1"}, PullPolicy::kMissing, {});
  ASSERT_TRUE(image.has_value());
  EXPECT_EQ(image->id, "sha256:abc123");
  EXPECT_EQ(image->digest, "repo/x@sha256:def");
  EXPECT_EQ(image->path_env(), "/opt/bin:/usr/bin");
  EXPECT_EQ(runner.calls.size(), 1U);
  EXPECT_THAT(runner.calls[0],
              ElementsAre("/usr/bin/docker", "image", "inspect", "--format", "{{json .}}", "repo/x:1"));
}

// An image for another architecture never builds the cell: the next candidate does, and the
// refusal is in `tried`.
TEST(ResolveImage, AnImageOfAnotherArchitectureIsPassedOver) {
  FakeRunner runner([](const auto& argv) {
    if (argv[1] != "image") return failed("unexpected");
    return ok(argv.back() == "arm:1" ? R"({"Id":"sha256:a1","Architecture":"arm64"})"
                                     : R"({"Id":"sha256:b2","Architecture":"amd64"})");
  });
  const auto [image, tried] = resolve_image(runner, kDocker, {"arm:1", "x86:1"}, PullPolicy::kMissing, {},
                                            image_architecture(Platform::kLinuxX86_64));
  ASSERT_TRUE(image.has_value());
  EXPECT_EQ(image->name, "x86:1");
  EXPECT_EQ(image->architecture, "amd64");
  ASSERT_EQ(tried.size(), 2U);
  EXPECT_EQ(tried[0].outcome, "present, but an arm64 image; the cell builds amd64 wheels");
  const auto [nothing, none] = resolve_image(runner, kDocker, {"x86:1"}, PullPolicy::kNever, {}, "arm64");
  EXPECT_FALSE(nothing.has_value());
}

TEST(ResolveImage, MissingThenPullFailsThenFallback) {
  FakeRunner runner([](const auto& argv) {
    if (argv[1] == "pull") return failed("Error response from daemon: pull access denied\nmore");
    return argv.back() == "second:1" ? ok(kInspect) : failed("Error: No such image");
  });
  const auto [image, tried] = resolve_image(runner, kDocker, {"first:1", "second:1"}, PullPolicy::kMissing, {});
  ASSERT_TRUE(image.has_value());
  EXPECT_EQ(image->name, "second:1");
  ASSERT_EQ(tried.size(), 2U);
  EXPECT_EQ(tried[0].candidate, "first:1");
  EXPECT_EQ(tried[0].outcome, "not present; pull failed: Error response from daemon: pull access denied");
  EXPECT_EQ(tried[1].outcome, "present");
}

TEST(ResolveImage, PulledWhenMissing) {
  bool pulled = false;
  FakeRunner runner([&](const auto& argv) {
    if (argv[1] == "pull") {
      pulled = true;
      return ok("");
    }
    return pulled ? ok(kInspect) : failed("No such image");
  });
  const auto [found, tried] = resolve_image(runner, kDocker, {"a:1"}, PullPolicy::kMissing, {});
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(tried.at(0).outcome, "not present; pulled");
}

TEST(ResolveImage, NeverPullAndAlwaysPull) {
  FakeRunner absent([](const auto&) { return failed("No such image"); });
  const auto [answer, tried] = resolve_image(absent, kDocker, {"a:1"}, PullPolicy::kNever, {});
  EXPECT_FALSE(answer.has_value());
  EXPECT_EQ(tried.at(0).outcome, "not present (pull: never)");
  EXPECT_EQ(absent.calls.size(), 1U);  // no pull

  // always: pull first; offline, the local copy still serves.
  FakeRunner offline(
      [](const auto& argv) { return argv[1] == "pull" ? failed("dial tcp: connection refused") : ok(kInspect); });
  const auto [local, offline_tried] = resolve_image(offline, kDocker, {"a:1"}, PullPolicy::kAlways, {});
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(offline.calls.at(0)[1], "pull");
  EXPECT_THAT(offline_tried.at(0).outcome, HasSubstr("using the local copy"));
}

TEST(ContainerArgv, StartRunsAsTheUserWithLimitsMountsAndLabels) {
  ContainerSettings s;
  s.name = container_name("1a2b3c4d", "fa2.8.3-torch2.8-cu128-cp312-linux_x86_64");
  s.image = "sha256:abc";
  s.user = "1000:1000";
  s.home = "/w/.staging/c/home";
  s.network = "none";
  s.memory = "{memory_mb}m";
  s.cpus = "{cores}";
  s.mounts = {{"/w/.staging/c", "/w/.staging/c", false}, {"/src,odd", "/src,odd", true}};
  s.labels = {{"fabuild.run", "1a2b3c4d"}};
  EXPECT_THAT(start_argv(kDocker, s),
              ElementsAre("/usr/bin/docker", "run", "--detach", "--init", "--name",
                          "fabuild-1a2b3c4d-fa2.8.3-torch2.8-cu128-cp312-linux_x86_64", "--label",
                          "fabuild.run=1a2b3c4d", "--user", "1000:1000", "--env", "HOME=/w/.staging/c/home",
                          "--network", "none", "--memory", "{memory_mb}m", "--memory-swap", "{memory_mb}m", "--cpus",
                          "{cores}", "--mount", "type=bind,source=/w/.staging/c,target=/w/.staging/c", "--mount",
                          "type=bind,\"source=/src,odd\",\"target=/src,odd\",readonly", "--entrypoint", "sleep",
                          "sha256:abc", "infinity"));
}

TEST(ContainerArgv, ExecPassesEnvAndArgvAsSeparateArguments) {
  EXPECT_THAT(exec_argv(kDocker, "fabuild-x-c", {"python", "-c", "print('$(touch x)')"}, {{"MAX_JOBS", "4"}}, "/w/src"),
              ElementsAre("/usr/bin/docker", "exec", "--workdir", "/w/src", "--env", "MAX_JOBS=4", "fabuild-x-c",
                          "python", "-c", "print('$(touch x)')"));
  EXPECT_THAT(remove_argv(kDocker, "fabuild-x-c"),
              ElementsAre("/usr/bin/docker", "rm", "--force", "--volumes", "fabuild-x-c"));
}

TEST(ContainerArgv, NamesKeepOnlyWhatEnginesAccept) {
  EXPECT_EQ(container_name("r", "fa2.8.3+x/y z"), "fabuild-r-fa2.8.3-x-y-z");
  EXPECT_EQ(container_name("probe-1", ""), "fabuild-probe-1");
  EXPECT_EQ(new_run_id().size(), 8U);
  EXPECT_NE(new_run_id(), new_run_id());
}

TEST(ContainerArgv, RootlessPodmanKeepsTheUsersId) {
  const ContainerEngine podman{"/usr/bin/podman", engine_kind("podman"), true};
  ContainerSettings s;
  s.name = "n";
  s.image = "i";
  s.user = "1000:1000";
  const auto argv = start_argv(podman, s);
  EXPECT_THAT(argv, testing::Contains("--userns=keep-id"));
}

TEST(ContainerEngineSearch, SaysWhatWasTriedAndWhatToDo) {
  FakeRunner runner(
      [](const auto&) { return failed("Cannot connect to the Docker daemon at unix:///var/run/docker.sock"); });
  const auto none = find_container_engine(runner, "", {"PATH=/nonexistent"});
  ASSERT_FALSE(none.has_value());
  EXPECT_THAT(none.error().what, HasSubstr("docker: not on PATH; podman: not on PATH"));
  EXPECT_THAT(none.error().hint, HasSubstr("provision: host"));

  test::ScratchDir dir{"fabuild-engine"};
  const fs::path docker = dir.path() / "docker";
  std::ofstream(docker) << "#!/bin/sh\n";
  fs::permissions(docker, fs::perms::owner_all);
  const auto down = find_container_engine(runner, "docker", {"PATH=" + dir.path().string()});
  ASSERT_FALSE(down.has_value());
  EXPECT_THAT(down.error().what, HasSubstr(docker.string() + ": Cannot connect to the Docker daemon"));

  FakeRunner answers([](const auto&) { return ok("20.10.24\n"); });
  const auto engine = find_container_engine(answers, "", {"PATH=" + dir.path().string()});
  ASSERT_TRUE(engine.has_value());
  EXPECT_EQ(engine->program, docker.string());
  EXPECT_EQ(engine->kind, engine_kind("docker"));
}

TEST(ContainerProbe, RunsTheQuestionInAThrowawayContainerWithoutNetwork) {
  FakeRunner host([](const auto&) { return ok("3.12\n"); });
  ContainerCommandRunner probe(host, kDocker, "sha256:abc", {{"/usr/local/cuda-13.0", "/usr/local/cuda-13.0", true}},
                               {});
  const CommandResult r = probe.run({"/usr/bin/python3", "-c", "print(1)"}, {"PATH=/usr/bin"}, std::chrono::seconds(5));
  EXPECT_EQ(r.output, "3.12\n");
  const auto& argv = host.calls.at(0);
  EXPECT_THAT(std::vector<std::string>(argv.begin(), argv.begin() + 3), ElementsAre("/usr/bin/docker", "run", "--rm"));
  EXPECT_THAT(argv, testing::Contains("none"));
  EXPECT_THAT(argv, testing::Contains("PATH=/usr/bin"));
  EXPECT_THAT(argv, testing::Contains("type=bind,source=/usr/local/cuda-13.0,target=/usr/local/cuda-13.0,readonly"));
  EXPECT_THAT(std::vector<std::string>(argv.end() - 5, argv.end()),
              ElementsAre("--entrypoint", "/usr/bin/python3", "sha256:abc", "-c", "print(1)"));
}

}  // namespace
}  // namespace fabuild
