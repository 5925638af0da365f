#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.h"

namespace fabuild {
namespace {

using test::error_of;
using test::kBase;
using ::testing::HasSubstr;

TEST(Loader, ReadsTheBaseMatrix) {
  const MatrixSpec s = test::spec_of(kBase);
  EXPECT_EQ(s.package->name, "flash-attn");
  ASSERT_EQ(s.torch.size(), 2u);
  EXPECT_EQ(s.torch[1].value.str(), "2.8");
  EXPECT_EQ(s.torch[1].where.str(), "m.yaml:3:16");
  ASSERT_EQ(s.platforms.size(), 1u);
  EXPECT_EQ(s.platforms[0].value, Platform::kLinuxX86_64);
  EXPECT_EQ(s.abis[0].value, Abi::kAuto);
}

TEST(Loader, PythonVersionsAreNormalisedAndNotFloats) {
  const MatrixSpec s = test::spec_of(std::string(kBase) + "platform: linux_x86_64\n" + "exclude: [{python: 3.10}]\n");
  const MatrixSpec t =
      test::spec_of("versions: [2.8.3]\ntorch: [2.10]\ncuda: [13.0]\npython: [3.10, \"3.12\", cp313]\n");
  EXPECT_EQ(t.python[0].value.str(), "cp310");  // not 3.1
  EXPECT_EQ(t.python[1].value.str(), "cp312");
  EXPECT_EQ(t.torch[0].value.str(), "2.10");  // not 2.1
  EXPECT_EQ(s.exclude[0].match[0].values[0], "cp310");
}

TEST(Loader, YamlSyntaxErrorHasPosition) {
  const auto e = error_of("versions: [\"2.8.3\"\ntorch: [2.8]\n");
  EXPECT_EQ(e.code, kExitBadConfig);
  EXPECT_THAT(e.message, HasSubstr("m.yaml:2:"));
  EXPECT_THAT(e.message, HasSubstr("YAML syntax: "));
}

TEST(Loader, UnknownKeyWithDidYouMean) {
  const auto e = error_of(std::string(kBase) + "pyhton: [cp313]\n");
  EXPECT_EQ(e.message, "m.yaml:6:1: unknown key 'pyhton' in the matrix (did you mean 'python'?)");
  EXPECT_THAT(e.hint, HasSubstr("known keys here: package, versions"));
}

TEST(Loader, UnknownKeyInsideIncludeAndBuild) {
  EXPECT_EQ(error_of(std::string(kBase) + "include: [{torch: \"2.8\", archz: \"80\"}]\n").message,
            "m.yaml:6:26: unknown key 'archz' in an include entry (did you mean 'archs'?)");
  EXPECT_EQ(error_of(std::string(kBase) + "build: {max_job: 4}\n").message,
            "m.yaml:6:9: unknown key 'max_job' in build (did you mean 'max_jobs'?)");
}

TEST(Loader, DuplicateKey) {
  EXPECT_EQ(error_of(std::string(kBase) + "torch: [\"2.9\"]\n").message,
            "m.yaml:6:1: key 'torch' appears twice in the matrix (first at line 3)");
}

TEST(Loader, WrongType) {
  EXPECT_EQ(error_of("versions: [\"2.8.3\"]\ntorch: {a: 1}\ncuda: [\"12.8\"]\npython: [cp312]\n").message,
            "m.yaml:2:8: torch must be a value or a list of values, not a mapping");
  EXPECT_EQ(error_of(std::string(kBase) + "exclude: {torch: \"2.7\"}\n").message,
            "m.yaml:6:10: exclude must be a list of mappings, not a mapping");
  EXPECT_EQ(error_of(std::string(kBase) + "build: {nvcc_threads: two}\n").message,
            "m.yaml:6:23: build.nvcc_threads must be a whole number >= 1, not 'two'");
}

TEST(Loader, EmptyAxis) {
  const auto e = error_of("versions: [\"2.8.3\"]\ntorch: []\ncuda: [\"12.8\"]\npython: [cp312]\n");
  EXPECT_EQ(e.message, "m.yaml:2:8: torch is empty");
  EXPECT_EQ(e.hint, "list at least one value under torch");
  EXPECT_EQ(error_of("versions: [\"2.8.3\"]\ntorch:\ncuda: [\"12.8\"]\npython: [cp312]\n").message,
            "m.yaml:2:1: torch is empty");
}

TEST(Loader, MissingAxis) {
  const auto e = error_of("versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\npython: [cp312]\n");
  EXPECT_EQ(e.message, "m.yaml:1:1: missing 'cuda'");
}

TEST(Loader, UnknownPythonTag) {
  const auto e = error_of("versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312, cp27]\n");
  EXPECT_EQ(e.message, "m.yaml:4:17: unknown Python tag 'cp27'");
  EXPECT_THAT(e.hint, HasSubstr("cp38, cp39, cp310, cp311, cp312, cp313, cp314, cp315"));
  EXPECT_EQ(error_of("versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [pc312]\n").message,
            "m.yaml:4:10: unknown Python tag 'pc312' (did you mean 'cp312'?)");
}

TEST(Loader, UnparsableVersions) {
  EXPECT_EQ(error_of("versions: [2.8.x]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n").message,
            "m.yaml:1:12: '2.8.x' is not a version");
  EXPECT_EQ(error_of("versions: [2.8.3]\ntorch: [\"2\"]\ncuda: [\"12.8\"]\npython: [cp312]\n").message,
            "m.yaml:2:9: '2' is not a torch series, version or range");
  EXPECT_EQ(error_of("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12\"]\npython: [cp312]\n").message,
            "m.yaml:3:8: '12' is not a CUDA version");
}

TEST(Loader, DuplicateAxisValue) {
  EXPECT_EQ(error_of("versions: [2.8.3]\ntorch: [\"2.8\"]\ncuda: [\"12.8\", cu128]\npython: [cp312]\n").message,
            "m.yaml:3:16: cuda '12.8' is listed twice in cuda (first at line 3)");
}

TEST(Loader, UnknownArchSaysWhatToDo) {
  const auto e = error_of(std::string(kBase) + "archs: \"80;86\"\n");
  EXPECT_EQ(e.message,
            "m.yaml:6:8: arch 86 is not one flash-attn builds (it knows 80;90;100;110;120); its setup.py would "
            "silently skip it");
  EXPECT_EQ(e.hint, "sm_80 kernels also run on sm_86 GPUs: use 80");
  EXPECT_EQ(error_of(std::string(kBase) + "archs: [75]\n").hint, "flash-attn builds 80;90;100;110;120");
}

TEST(Loader, ArchSpellings) {
  const MatrixSpec s =
      test::spec_of(std::string(kBase) + "archs: {default: \"9.0, sm_80\", \"12.8\": [80, 90, 100, 120]}\n");
  ASSERT_TRUE(s.archs.all.has_value());
  EXPECT_EQ(to_string(s.archs.all->value), "80;90");
  EXPECT_EQ(to_string(s.archs.per_cuda.at(*Version::parse("12.8")).value), "80;90;100;120");
}

TEST(Loader, EnvMayNotSetWhatFabuildSets) {
  const auto e = error_of(std::string(kBase) + "env: {MAX_JOBS: \"48\"}\n");
  EXPECT_EQ(e.message, "m.yaml:6:7: env sets MAX_JOBS, which fabuild sets for every cell");
  EXPECT_EQ(e.hint, "use the matrix key 'build.max_jobs' instead");
}

TEST(Loader, TorchCudaArchListIsAWarning) {
  const MatrixSpec s = test::spec_of(std::string(kBase) + "env: {TORCH_CUDA_ARCH_LIST: \"8.6\"}\n");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_THAT(s.warnings[0], HasSubstr("m.yaml:6:7: env sets TORCH_CUDA_ARCH_LIST, which flash-attn never reads"));
}

TEST(Loader, NotAMatrix) {
  EXPECT_EQ(error_of("").message, "m.yaml: the matrix file is empty");
  EXPECT_EQ(error_of("- a\n- b\n").message, "m.yaml:1:1: a matrix file is a mapping of keys to values, not a list");
  EXPECT_EQ(error_of("package: flash-atn\n").message,
            "m.yaml:1:10: unknown package 'flash-atn' (did you mean 'flash-attn'?)");
}

TEST(Loader, Durations) {
  const MatrixSpec s = test::spec_of(std::string(kBase) + "build: {timeout: 1h30m}\n");
  EXPECT_DOUBLE_EQ(*s.build.timeout_s, 5400);
  EXPECT_EQ(error_of(std::string(kBase) + "build: {timeout: soon}\n").message,
            "m.yaml:6:18: build.timeout must be a duration like 90m, 3h, 1h30m or seconds, not 'soon'");
}

TEST(Loader, CompatOverrides) {
  const MatrixSpec s = test::spec_of(std::string(kBase) +
                                     "compat:\n"
                                     "  torch_cuda: {\"2.16\": [\"13.0\", \"12.8\"]}\n"
                                     "  torch_python: {\"2.16\": \"3.10-3.14\"}\n"
                                     "  fa_min_torch: {\"2.8\": \"2.4\"}\n"
                                     "  arch_min_cuda: {\"120\": \"12.9\"}\n");
  const auto* builds = s.compat.cuda_builds(*Version::parse("2.16"));
  ASSERT_NE(builds, nullptr);
  EXPECT_EQ(builds->front().str(), "12.8");
  EXPECT_EQ(s.compat.python_range(*Version::parse("2.16"))->max.str(), "cp314");
  EXPECT_EQ(s.compat.min_torch(*Version::parse("2.8.3"))->str(), "2.4");
  EXPECT_EQ(s.compat.arch_min_cuda.at(120).str(), "12.9");
  EXPECT_EQ(error_of(std::string(kBase) + "compat: {arch_min_cuda: {\"86\": \"11.1\"}}\n").message,
            "m.yaml:6:26: '86' is not an arch flash-attn builds");
}

TEST(Loader, Sources) {
  EXPECT_EQ(test::spec_of(kBase).source.kind, SourceSpec::Kind::kPip);
  const MatrixSpec git = test::spec_of(std::string(kBase) + "source: {git: https://example.invalid/fa.git}\n");
  EXPECT_EQ(git.source.kind, SourceSpec::Kind::kGit);
  EXPECT_EQ(git.source.ref, "v{version}");
  const MatrixSpec sdist = test::spec_of(
      std::string(kBase) + "source: {sdist: \"fa-{version}.tar.gz\", sha256: " + std::string(64, 'A') + "}\n");
  EXPECT_EQ(sdist.source.sha256, std::string(64, 'a'));
  EXPECT_EQ(error_of(std::string(kBase) + "source: {path: a, git: b}\n").message,
            "m.yaml:6:9: source names more than one of path, sdist and git");
  EXPECT_EQ(error_of(std::string(kBase) + "source: {sdist: a.tar.gz, sha256: abc}\n").message,
            "m.yaml:6:35: source.sha256 must be 64 hex digits");
}

TEST(Loader, HostileShapesNeverCrash) {
  // Deep nesting, aliases, odd scalars: each is either read or refused with an error.
  std::string deep = std::string(kBase) + "env: ";
  for (int i = 0; i < 2000; ++i) deep += "[";
  const auto e = error_of(deep);
  EXPECT_EQ(e.code, kExitBadConfig);
  const auto a = error_of("x: &a [1, 2]\nversions: *a\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n");
  EXPECT_EQ(a.code, kExitBadConfig);
}

}  // namespace
}  // namespace fabuild

namespace fabuild {
namespace {

TEST(Loader, PlatformTagIsLinuxOrAManylinuxPolicy) {
  EXPECT_EQ(test::spec_of(std::string(test::kBase) + "platform_tag: manylinux_2_28\n").package->manylinux,
            "manylinux_2_28");
  EXPECT_EQ(test::spec_of(std::string(test::kBase) + "platform_tag: linux\n").package->manylinux, "");
  const auto e = test::error_of(std::string(test::kBase) + "platform_tag: manylinux2014\n");
  EXPECT_NE(e.message.find("m.yaml:6:15: platform_tag: 'manylinux2014' is neither linux nor a manylinux policy"),
            std::string::npos)
      << e.message;
  EXPECT_EQ(e.code, 2);
}

}  // namespace
}  // namespace fabuild
