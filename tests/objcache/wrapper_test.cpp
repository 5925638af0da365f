// fabuild-cc for real: the static wrapper in front of the real g++ and nvcc, compiling in two
// "cells" whose staging directories and virtualenvs lie at different paths.

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <set>
#include <thread>

#include "objcache/normal_form.h"
#include "objcache/reproducible.h"
#include "objcache/store.h"
#include "support.h"

namespace fabuild::objcache {
namespace {

namespace fs = std::filesystem;
using test::Cell;
using test::Ran;
using test::run;
using test::tally_lines;
using test::write;

constexpr const char* kNvcc = "/usr/local/cuda/bin/nvcc";

class Wrapper : public ::testing::Test {
 protected:
  Wrapper()
      : scratch_("objcache-wrapper"),
        a_(scratch_.path(), "cell-a", "3.11"),
        b_(scratch_.path(), "cell-b", "3.12"),
        cache_(scratch_.path() / "cache"),
        tally_(scratch_.path() / "tally") {
    for (const Cell* c : {&a_, &b_}) lay_out(*c);
  }

  // The same files in each cell: a source that includes a local header, a header from
  // torch's include directory, and a system header.
  static void lay_out(const Cell& c) {
    write(c.src / "csrc" / "k.cpp",
          "#include \"local.h\"\n#include <torch/extension.h>\n#include <cstdio>\n"
          "int kernel() { return LOCAL + TORCH_LIKE + X; }\n");
    write(c.src / "csrc" / "local.h", "#define LOCAL 1\n");
    write(c.torch_include / "torch" / "extension.h", "#pragma once\n#define TORCH_LIKE 2 // torch\n");
    write(c.src / "csrc" / "k.cu",
          "#include <torch/extension.h>\n__global__ void k(float* x) { x[threadIdx.x] *= TORCH_LIKE; }\n"
          "void launch(float* x) { k<<<1, 32>>>(x); }\n");
  }

  std::vector<std::string> env() const {
    return {"FABUILD_CC_DIR=" + cache_.string(), "FABUILD_CC_TALLY=" + tally_.string()};
  }

  // torch's rule: the compiler, -MMD/-MD -MF <obj>.d, the cell's include dirs, -c <src> -o <obj>.
  std::vector<std::string> gxx(const Cell& c, const std::string& object, std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv = {FABUILD_CC_BINARY,
                                     "g++",
                                     "-MMD",
                                     "-MF",
                                     (c.build / (object + ".d")).string(),
                                     "-I" + (c.src / "csrc").string(),
                                     "-I" + c.torch_include.string(),
                                     "-O2",
                                     "-DX=3",
                                     "-c",
                                     (c.src / "csrc" / "k.cpp").string(),
                                     "-o",
                                     (c.build / object).string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  Ran compile(const Cell& c, const std::vector<std::string>& argv) const {
    return run(argv, env(), c.build, scratch_.path());
  }

  std::vector<std::string> outcomes() const {
    std::vector<std::string> out;
    for (const auto& line : tally_lines(tally_)) out.push_back(line.at(0));
    return out;
  }

  std::string last_detail() const { return tally_lines(tally_).back().at(3); }

  // `compiler ARGS -c SOURCE -o OBJECT` through fabuild-cc in cell `c`'s build directory, with a
  // cache of its own (`cache` under the cell's root) and the cell's staging directory (and, when
  // asked, its environment) told; the object's bytes.
  std::string compile_alone(const Cell& c, const std::string& compiler, const fs::path& source,
                            const std::vector<std::string>& args, const std::string& cache, bool with_env = false) {
    const fs::path object = c.build / (source.stem().string() + ".o");
    std::vector<std::string> argv = {FABUILD_CC_BINARY, compiler};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"-c", source.string(), "-o", object.string()});
    std::vector<std::string> env = {"FABUILD_CC_DIR=" + (c.root / cache).string(),
                                    "FABUILD_CC_TALLY=" + tally_.string(),
                                    "FABUILD_CC_BASEDIR=" + (c.root / "stage").string()};
    if (with_env) env.push_back("FABUILD_CC_ENVDIR=" + (c.root / "venv").string());
    const Ran r = run(argv, env, c.build, scratch_.path());
    EXPECT_EQ(r.code, 0) << r.err;
    return fabuild::test::ScratchDir::read(object);
  }

  fabuild::test::ScratchDir scratch_;
  Cell a_;
  Cell b_;
  fs::path cache_;
  fs::path tally_;
};

TEST_F(Wrapper, TwoCellsWithIdenticalHeadersAtDifferentPathsShareTheObject) {
  const Ran first = compile(a_, gxx(a_, "k.o"));
  ASSERT_EQ(first.code, 0) << first.err;
  const Ran second = compile(b_, gxx(b_, "k.o"));
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "hit"}));

  // The object is byte for byte what the compiler makes in cell b (gcc names only the source's
  // base name in it; __FILE__ and debug information would name cell a: docs/performance.md).
  const Ran fresh = run({"g++", "-I" + (b_.src / "csrc").string(), "-I" + b_.torch_include.string(), "-O2", "-DX=3",
                         "-c", (b_.src / "csrc" / "k.cpp").string(), "-o", (b_.build / "fresh.o").string()},
                        {}, b_.build, scratch_.path());
  ASSERT_EQ(fresh.code, 0) << fresh.err;
  EXPECT_EQ(fabuild::test::ScratchDir::read(b_.build / "k.o"), fabuild::test::ScratchDir::read(b_.build / "fresh.o"));

  // The depfile names cell b's files, for ninja to watch, and none of cell a's.
  const std::string deps = fabuild::test::ScratchDir::read(b_.build / "k.o.d");
  EXPECT_NE(deps.find((b_.torch_include / "torch" / "extension.h").string()), std::string::npos) << deps;
  EXPECT_NE(deps.find((b_.src / "csrc" / "local.h").string()), std::string::npos) << deps;
  EXPECT_EQ(deps.find("cell-a"), std::string::npos) << deps;
  EXPECT_EQ(deps.rfind((b_.build / "k.o").string() + ":", 0), 0U) << deps;
}

TEST_F(Wrapper, OneChangedHeaderByteIsAMiss) {
  ASSERT_EQ(compile(a_, gxx(a_, "k.o")).code, 0);
  write(b_.torch_include / "torch" / "extension.h", "#pragma once\n#define TORCH_LIKE 2 // torcH\n");
  const Ran r = compile(b_, gxx(b_, "k.o"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  EXPECT_NE(last_detail().find("extension.h changed"), std::string::npos) << last_detail();
  // Both versions are kept: each cell now hits.
  ASSERT_EQ(compile(a_, gxx(a_, "again.o")).code, 0);
  ASSERT_EQ(compile(b_, gxx(b_, "again.o")).code, 0);
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss", "hit", "hit"}));
}

// uv hard-links torch's headers from its cache into every environment: making or removing
// another environment meanwhile changes a header's link count and status change time, never its
// content. Such a compile is stored (found by a share job whose units went uncacheable).
TEST_F(Wrapper, AHeaderLinkedElsewhereDuringTheCompileIsStillCached) {
  const fs::path bin = scratch_.path() / "bin";
  const fs::path header = a_.torch_include / "torch" / "extension.h";
  write(bin / "g++", "#!/bin/sh\nln -f '" + header.string() + "' '" + header.string() + ".link' && rm '" +
                         header.string() + ".link'\nexec /usr/bin/g++ \"$@\"\n");
  fs::permissions(bin / "g++", fs::perms::owner_all);
  std::vector<std::string> env_with_path = env();
  env_with_path.push_back("PATH=" + bin.string() + ":/usr/bin:/bin");
  const Ran r = run(gxx(a_, "k.o"), env_with_path, a_.build, scratch_.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss"})) << last_detail();
  ASSERT_EQ(run(gxx(b_, "k.o"), env_with_path, b_.build, scratch_.path()).code, 0);
  EXPECT_EQ(outcomes().back(), "hit");
}

TEST_F(Wrapper, AChangedFlagIsAMiss) {
  ASSERT_EQ(compile(a_, gxx(a_, "k.o")).code, 0);
  ASSERT_EQ(compile(b_, gxx(b_, "k.o", {"-DEXTRA=1"})).code, 0);
  ASSERT_EQ(compile(b_, gxx(b_, "k2.o", {"-O3"})).code, 0);
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss", "miss"}));
}

TEST_F(Wrapper, AHeaderThatWouldNowBeFoundEarlierIsAMiss) {
  ASSERT_EQ(compile(a_, gxx(a_, "k.o")).code, 0);
  // The first -I directory now has torch/extension.h: the compiler would take that one.
  write(b_.src / "csrc" / "torch" / "extension.h", "#pragma once\n#define TORCH_LIKE 2 // torch\n");
  ASSERT_EQ(compile(b_, gxx(b_, "k.o")).code, 0);
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  EXPECT_NE(last_detail().find("would be included instead"), std::string::npos) << last_detail();
}

TEST_F(Wrapper, ConcurrentWritersOfOneKeyLeaveAUsableCache) {
  constexpr int kWriters = 8;
  std::vector<std::thread> threads;
  std::vector<Ran> results(kWriters);
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] { results[i] = compile(a_, gxx(a_, "k" + std::to_string(i) + ".o")); });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r.code, 0) << r.err;
  const std::string object = fabuild::test::ScratchDir::read(a_.build / "k0.o");
  ASSERT_FALSE(object.empty());
  for (int i = 1; i < kWriters; ++i)
    EXPECT_EQ(fabuild::test::ScratchDir::read(a_.build / ("k" + std::to_string(i) + ".o")), object);
  EXPECT_EQ(tally_lines(tally_).size(), static_cast<std::size_t>(kWriters));
  // Whatever interleaving happened, one manifest entry for this source and a hit afterwards.
  ASSERT_EQ(compile(b_, gxx(b_, "k.o")).code, 0);
  EXPECT_EQ(outcomes().back(), "hit");
  std::vector<fs::path> manifests;
  for (const auto& e : fs::recursive_directory_iterator(cache_ / "manifests")) {
    if (e.is_regular_file()) manifests.push_back(e.path());
  }
  ASSERT_EQ(manifests.size(), 1U);
  const std::string key = manifests[0].parent_path().filename().string() + manifests[0].filename().string();
  EXPECT_EQ(Store(cache_).manifest(key).entries.size(), 1U);
}

TEST_F(Wrapper, ADamagedCacheEntryIsIgnoredAndReplaced) {
  ASSERT_EQ(compile(a_, gxx(a_, "k.o")).code, 0);
  std::vector<fs::path> results;
  for (const auto& e : fs::recursive_directory_iterator(cache_ / "results")) {
    if (e.is_regular_file()) results.push_back(e.path());
  }
  ASSERT_EQ(results.size(), 1U);
  std::string bytes = fabuild::test::ScratchDir::read(results[0]);
  bytes[bytes.size() / 2] ^= 0x20;
  write(results[0], bytes);
  const Ran r = compile(b_, gxx(b_, "k.o"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  EXPECT_NE(last_detail().find("damaged"), std::string::npos) << last_detail();
  // The object came from the compiler, and the entry is good again.
  const Ran nm = run({"nm", (b_.build / "k.o").string()}, {}, b_.build, scratch_.path());
  EXPECT_NE(nm.out.find("kernel"), std::string::npos) << nm.out << nm.err;
  ASSERT_EQ(compile(a_, gxx(a_, "k2.o")).code, 0);
  EXPECT_EQ(outcomes().back(), "hit");
}

// A manifest whose object is not in the store (trimmed, or one the remote fetch refused while
// it took the manifest) is a miss that says so, never a claim that the object was trimmed.
TEST_F(Wrapper, AManifestWhoseObjectIsMissingIsAMissThatSaysWhy) {
  ASSERT_EQ(compile(a_, gxx(a_, "k.o")).code, 0);
  fs::remove_all(cache_ / "results");
  const Ran r = compile(b_, gxx(b_, "k.o"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  EXPECT_NE(last_detail().find("missing (trimmed, or refused by the remote fetch"), std::string::npos) << last_detail();
}

TEST_F(Wrapper, AFailingCompileFailsAsItWouldAndStoresNothing) {
  write(a_.src / "csrc" / "k.cpp", "int broken( {\n");
  const Ran r = compile(a_, gxx(a_, "k.o"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("error"), std::string::npos) << r.err;
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss"}));
  EXPECT_EQ(cache_size(cache_), 0U);
}

TEST_F(Wrapper, AnythingButACompileIsTheCompilerItself) {
  const Ran version = compile(a_, {FABUILD_CC_BINARY, "g++", "--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_NE(version.out.find("g++"), std::string::npos) << version.out;
  ASSERT_EQ(compile(a_, gxx(a_, "k.o")).code, 0);
  const Ran link = compile(
      a_, {FABUILD_CC_BINARY, "g++", "-shared", (a_.build / "k.o").string(), "-o", (a_.build / "k.so").string()});
  EXPECT_EQ(link.code, 0) << link.err;
  EXPECT_TRUE(fs::exists(a_.build / "k.so"));
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss"}));  // links are not counted
  const Ran usage = compile(a_, {FABUILD_CC_BINARY, "-c", "x.c"});
  EXPECT_EQ(usage.code, 2);
  const Ran missing = compile(a_, {FABUILD_CC_BINARY, "no-such-compiler-xyz", "-c", "x.c"});
  EXPECT_EQ(missing.code, 127);
  EXPECT_NE(missing.err.find("cannot find the compiler no-such-compiler-xyz"), std::string::npos) << missing.err;
}

TEST_F(Wrapper, AsFabuildCxxItStandsForTheCompilerInFabuildCcCxx) {
  const fs::path cxx = fs::path(FABUILD_CC_BINARY).parent_path() / "fabuild-c++";
  ASSERT_TRUE(fs::exists(cxx));
  std::vector<std::string> argv = gxx(a_, "k.o");
  argv.erase(argv.begin(), argv.begin() + 2);
  argv.insert(argv.begin(), cxx.string());
  const auto env_with = [&](const std::string& cxx_var) {
    auto e = env();
    e.push_back("FABUILD_CC_CXX=" + cxx_var);
    return e;
  };
  ASSERT_EQ(run(argv, env_with("g++"), a_.build, scratch_.path()).code, 0);
  argv[argv.size() - 1] = (a_.build / "k2.o").string();
  ASSERT_EQ(run(argv, env_with("g++"), a_.build, scratch_.path()).code, 0);
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "hit"}));
  // torch asks the compiler for its version through CXX.
  const Ran v = run({cxx.string(), "-dumpfullversion"}, env_with("g++"), a_.build, scratch_.path());
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find('.'), std::string::npos);
}

TEST_F(Wrapper, NvccAsTorchCallsItHitsAcrossCellsAndMissesAfterAHeaderChange) {
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no " << kNvcc;
  const auto nvcc = [&](const Cell& c, const std::string& object) {
    return std::vector<std::string>{FABUILD_CC_BINARY,
                                    kNvcc,
                                    "-MD",
                                    "-MF",
                                    (c.build / (object + ".d")).string(),
                                    "-I" + (c.src / "csrc").string(),
                                    "-I" + c.torch_include.string(),
                                    "-c",
                                    "-c",
                                    (c.src / "csrc" / "k.cu").string(),
                                    "-o",
                                    (c.build / object).string(),
                                    "--compiler-options",
                                    "'-fPIC'",
                                    "-O3",
                                    "-std=c++17",
                                    "-gencode",
                                    "arch=compute_90,code=sm_90",
                                    "--threads",
                                    "1"};
  };
  const Ran first = compile(a_, nvcc(a_, "k.o"));
  ASSERT_EQ(first.code, 0) << first.err;
  const Ran second = compile(b_, nvcc(b_, "k.o"));
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "hit"}));
  EXPECT_EQ(fabuild::test::ScratchDir::read(b_.build / "k.o"), fabuild::test::ScratchDir::read(a_.build / "k.o"));
  const std::string deps = fabuild::test::ScratchDir::read(b_.build / "k.o.d");
  EXPECT_NE(deps.find((b_.torch_include / "torch" / "extension.h").string()), std::string::npos) << deps;
  EXPECT_EQ(deps.find("cell-a"), std::string::npos) << deps;

  write(b_.torch_include / "torch" / "extension.h", "#pragma once\n#define TORCH_LIKE 3 // torch\n");
  const Ran third = compile(b_, nvcc(b_, "k2.o"));
  ASSERT_EQ(third.code, 0) << third.err;
  EXPECT_EQ(outcomes().back(), "miss");
  EXPECT_NE(fabuild::test::ScratchDir::read(b_.build / "k2.o"), fabuild::test::ScratchDir::read(a_.build / "k.o"));
}

// nvcc names a unit's file-local symbols after its source's real path (its module id:
// _INTERNAL_<hash>_..._cu_...), so the same unit compiled in two staging directories, each with
// a cache of its own, gave two objects. Told the staging directory, fabuild-cc has nvcc's front
// end take the source as lying under /fabuild-staging: one object, wherever it compiles.
TEST_F(Wrapper, NvccObjectsFromTwoStagingDirectoriesAreTheSameBytes) {
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no " << kNvcc;
  std::vector<std::string> objects;
  for (const Cell* c : {&a_, &b_}) {
    write(c->src / "csrc" / "anon.cu",
          "#include <cuda/std/array>\n"  // its customization-point objects have internal linkage
          "namespace { __device__ int twice(int x) { return 2 * x; } }\n"
          "__global__ void k(int* p) { cuda::std::array<int, 2> a{1, p[1]}; p[0] = twice(a[1]); }\n");
    objects.push_back(compile_alone(*c, kNvcc, c->src / "csrc" / "anon.cu",
                                    {"-O3", "-gencode", "arch=compute_90,code=sm_90"}, "own-cache"));
  }
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  EXPECT_NE(objects[0].find("_INTERNAL_"), std::string::npos) << "no module id to test";
  EXPECT_TRUE(objects[0] == objects[1]) << "the two objects differ";
}

// A unit that defines only explicit specializations (as FlashAttention 2's kernel files do): nvcc
// names its module id after its pid, and two compiles in one directory gave two objects, of
// different lengths when the pids had different numbers of digits. fabuild-cc's anchor names it:
// the same bytes each time, with PTX (compressed) and relocatable device code too.
TEST_F(Wrapper, NvccObjectsOfAUnitWithoutAKernelOfItsOwnAreTheSameBytesEachTime) {
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no " << kNvcc;
  write(a_.src / "csrc" / "spec.cu",
        "#include <cuda/std/array>\ntemplate <int N> void run(int* p);\n"
        "template <int N> __global__ void k(int* p) { cuda::std::array<int, 2> a{1, p[1]}; p[0] = N * a[1]; }\n"
        "template <> void run<3>(int* p) { k<3><<<1, 1>>>(p); }\n");
  const std::vector<std::vector<std::string>> modes = {{"-O3", "-gencode", "arch=compute_90,code=sm_90"},
                                                       {"-O3", "-arch=sm_90", "-rdc=true"}};  // with PTX
  for (std::size_t m = 0; m < modes.size(); ++m) {
    std::vector<std::string> objects;
    for (const std::string cache : {"c1", "c2"}) {
      std::vector<std::string> args = modes[m];
      args.insert(args.end(), {"-MD", "-MF", (a_.build / "spec.d").string()});
      objects.push_back(compile_alone(a_, kNvcc, a_.src / "csrc" / "spec.cu", args, cache + std::to_string(m)));
      const std::string deps = fabuild::test::ScratchDir::read(a_.build / "spec.d");
      EXPECT_NE(deps.find("spec.cu"), std::string::npos) << deps;
      EXPECT_EQ(deps.find("fabuild_module_"), std::string::npos) << "the build's depfile names the anchor: " << deps;
    }
    EXPECT_NE(objects[0].find("_spec_cu_"), std::string::npos) << "no module id to test";
    EXPECT_NE(objects[0].find("fabuild_module_"), std::string::npos) << "no anchor";
    EXPECT_TRUE(objects[0] == objects[1]) << "the two objects differ: " << modes[m][1];
  }
  EXPECT_EQ(outcomes(), std::vector<std::string>(4, "miss"));
}

// With line information (FlashAttention 3's -lineinfo) the objects name their staging directory,
// and such a compile is keyed by its real paths: the module anchor must not follow the key, or the
// module ids would differ from one directory to the next as well (measured on FlashAttention 3,
// whose every file-local symbol then differed). Named after the source and the arguments under
// their stand-ins, the ids are the same.
TEST_F(Wrapper, NvccModuleIdsWithLineInformationAreTheSameFromTwoStagingDirectories) {
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no " << kNvcc;
  const auto ids = [](const std::string& object) {
    std::set<std::string> found;
    const std::regex id("_INTERNAL_[0-9a-f]{8}_[0-9]+_anon_cu_[0-9a-f]{8}|fabuild_module_[0-9a-f]{16}");
    for (auto it = std::sregex_iterator(object.begin(), object.end(), id); it != std::sregex_iterator(); ++it) {
      found.insert(it->str());
    }
    return found;
  };
  std::vector<std::set<std::string>> found;
  for (const Cell* c : {&a_, &b_}) {
    write(c->src / "csrc" / "anon.cu",
          "#include <cuda/std/array>\n"
          "namespace { __device__ int twice(int x) { return 2 * x; } }\n"
          "__global__ void k(int* p) { cuda::std::array<int, 2> a{1, p[1]}; p[0] = twice(a[1]); }\n");
    found.push_back(ids(
        compile_alone(*c, kNvcc, c->src / "csrc" / "anon.cu",
                      {"-O3", "-lineinfo", "-gencode", "arch=compute_90,code=sm_90", "-I" + (c->src / "csrc").string()},
                      "own-cache")));
  }
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  ASSERT_GE(found[0].size(), 2u) << "no module id or no anchor to test";
  EXPECT_EQ(found[0], found[1]);
}

// With line information nvcc's device code names the files it was compiled from, through nvcc's
// own preprocessing, which no prefix map rewrites: FlashAttention 3's wheels differed from one
// directory to the next in those paths alone (measured on the GPU machine). fabuild-cc compiles
// such a unit through a view of its staging directory named after the compile: the objects are the
// same bytes from two directories, name neither, and the second directory's compile takes the
// first's object from a cache they share, with a depfile naming its own files.
TEST_F(Wrapper, NvccObjectsWithLineInformationAreTheSameBytesFromTwoStagingDirectories) {
  if (!fs::exists(kNvcc)) GTEST_SKIP() << "no " << kNvcc;
  // The line tables keep each file's modification time too: the same in every directory, as an
  // sdist's extraction leaves them.
  const auto stamp = fs::file_time_type::clock::now() - std::chrono::hours(24);
  const auto lay = [&](const Cell& c) {
    write(c.src / "csrc" / "twice.cuh", "__device__ inline float twice(float x) { return 2.f * x; }\n");
    write(c.src / "csrc" / "line.cu",
          "#include \"twice.cuh\"\n__global__ void k(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n");
    for (const char* name : {"twice.cuh", "line.cu"}) fs::last_write_time(c.src / "csrc" / name, stamp);
  };
  const auto args = [](const Cell& c) {
    return std::vector<std::string>{"-O3",
                                    "-lineinfo",
                                    "-gencode",
                                    "arch=compute_90,code=sm_90",
                                    "-I" + (c.src / "csrc").string(),
                                    "-MD",
                                    "-MF",
                                    (c.build / "line.d").string()};
  };
  std::vector<std::string> objects;
  for (const Cell* c : {&a_, &b_}) {
    lay(*c);
    objects.push_back(compile_alone(*c, kNvcc, c->src / "csrc" / "line.cu", args(*c), "own-cache"));
  }
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  EXPECT_NE(objects[0].find("twice.cuh"), std::string::npos) << "no line information to test";
  EXPECT_EQ(objects[0].find("cell-a"), std::string::npos) << "the object names its staging directory";
  EXPECT_TRUE(objects[0] == objects[1]) << "the two objects differ";
  const std::string deps = fabuild::test::ScratchDir::read(b_.build / "line.d");
  EXPECT_NE(deps.find((b_.src / "csrc" / "twice.cuh").string()), std::string::npos) << deps;
  EXPECT_EQ(deps.find(NormalForm::kViewRoot), std::string::npos) << "the build's depfile names the view: " << deps;

  // One cache for two directories of the same cell (the same Python, so the same build directory
  // under each): the second directory's compile is a hit, its depfile its own.
  const Cell c_(scratch_.path(), "cell-ccccccccc", "3.11");
  lay(c_);
  fs::remove(a_.build / "line.o");
  for (const Cell* c : {static_cast<const Cell*>(&a_), &c_}) {
    std::vector<std::string> argv = {FABUILD_CC_BINARY, kNvcc};
    for (const auto& a : args(*c)) argv.push_back(a);
    argv.insert(argv.end(), {"-c", (c->src / "csrc" / "line.cu").string(), "-o", (c->build / "line.o").string()});
    const Ran r = run(argv,
                      {"FABUILD_CC_DIR=" + (scratch_.path() / "shared-cache").string(),
                       "FABUILD_CC_TALLY=" + tally_.string(), "FABUILD_CC_BASEDIR=" + (c->root / "stage").string()},
                      c->build, scratch_.path());
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const auto all = outcomes();
  EXPECT_EQ(std::vector<std::string>(all.end() - 2, all.end()), (std::vector<std::string>{"miss", "hit"}));
  EXPECT_TRUE(fabuild::test::ScratchDir::read(c_.build / "line.o") == objects[0]) << "the hit is not the same object";
  const std::string hit_deps = fabuild::test::ScratchDir::read(c_.build / "line.d");
  EXPECT_NE(hit_deps.find((c_.src / "csrc" / "twice.cuh").string()), std::string::npos) << hit_deps;
}

// Two CI jobs build the same cell, each with a Python environment of its own: torch's headers
// there name their path in __FILE__ (TORCH_INTERNAL_ASSERT's messages), so the objects differed
// by the environments' paths (measured: a wheel from compile shares against one from a single
// run). Told the environment, fabuild-cc maps it out as it maps the staging directory.
TEST_F(Wrapper, ObjectsFromTwoPythonEnvironmentsAreTheSameBytes) {
  std::vector<std::string> objects;
  for (const std::string job : {"job-1", "job-22"}) {
    const Cell c(scratch_.path(), job, "3.12");
    lay_out(c);
    write(c.torch_include / "torch" / "extension.h",
          "#pragma once\n#define TORCH_LIKE 2\ninline const char* where() { return __FILE__; }\n");
    write(c.src / "csrc" / "k.cpp", "#include <torch/extension.h>\nconst char* kernel() { return where(); }\n");
    objects.push_back(compile_alone(c, "g++", c.src / "csrc" / "k.cpp", {"-I" + c.torch_include.string(), "-O2"},
                                    "own-cache", /*with_env=*/true));
  }
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"miss", "miss"}));
  EXPECT_NE(objects[0].find("/fabuild-env/lib/python3.12/site-packages/torch/include/torch/extension.h"),
            std::string::npos)
      << "__FILE__ does not name the environment's stand-in";
  EXPECT_TRUE(objects[0] == objects[1]) << "the two objects differ";
}

}  // namespace
}  // namespace fabuild::objcache
