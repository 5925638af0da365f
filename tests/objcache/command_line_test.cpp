#include "objcache/command_line.h"

#include <gtest/gtest.h>

namespace fabuild::objcache {
namespace {

// torch 2.11's build.ninja, rule cuda_compile, for one kernel of the example package.
std::vector<std::string> torch_nvcc_args(const std::string& stage, const std::string& site, const std::string& pyinc) {
  return {"-MD",
          "-MF",
          stage + "/build/temp/k.o.d",
          "-I" + stage + "/csrc/flash_example",
          "-I" + stage + "/csrc/flash_example/src",
          "-I" + site + "/torch/include",
          "-I" + site + "/torch/include/torch/csrc/api/include",
          "-I/usr/local/cuda/include",
          "-I" + pyinc,
          "-c",
          "-c",
          stage + "/csrc/flash_example/src/k.cu",
          "-o",
          stage + "/build/temp/k.o",
          "--expt-relaxed-constexpr",
          "--compiler-options",
          "'-fPIC'",
          "-O3",
          "-std=c++17",
          "-gencode",
          "arch=compute_90,code=sm_90",
          "--threads",
          "1",
          "-DTORCH_EXTENSION_NAME=flash_example_cuda"};
}

TEST(CommandLine, TorchNvccCompileIsCacheable) {
  const auto cmd = parse_compile(CompilerKind::kNvcc, torch_nvcc_args("/s", "/v/site-packages", "/py/include"));
  EXPECT_EQ(cmd.uncacheable, "");
  EXPECT_EQ(cmd.source_path(), "/s/csrc/flash_example/src/k.cu");
  EXPECT_EQ(cmd.output_path(), "/s/build/temp/k.o");
  EXPECT_EQ(cmd.depfile_path(), "/s/build/temp/k.o.d");
  EXPECT_EQ(cmd.deps, DepStyle::kAll);
  ASSERT_EQ(cmd.search.size(), 6U);
  EXPECT_EQ(cmd.search[2].path, "/v/site-packages/torch/include");
  EXPECT_EQ(cmd.search[2].offset, 2U);
  EXPECT_FALSE(cmd.debug);
}

TEST(CommandLine, OlderTorchDependencyFlagsAndSeparateIncludeValues) {
  const auto cmd =
      parse_compile(CompilerKind::kNvcc, {"--generate-dependencies-with-compile", "--dependency-output", "k.o.d", "-I",
                                          "inc", "--include-path=/abs", "-c", "k.cu", "-o", "k.o"});
  EXPECT_EQ(cmd.uncacheable, "");
  EXPECT_EQ(cmd.depfile_path(), "k.o.d");
  ASSERT_EQ(cmd.search.size(), 2U);
  EXPECT_EQ(cmd.search[0].path, "inc");
  EXPECT_EQ(cmd.search[1].path, "/abs");
}

TEST(CommandLine, GccSearchOrderIsQuoteThenAngleThenSystemThenAfter) {
  const auto cmd = parse_compile(CompilerKind::kGcc, {"-idirafter", "/after", "-isystem/sys", "-I/i", "-iquote", "/q",
                                                      "-MMD", "-MF", "a.o.d", "-c", "a.cpp", "-o", "a.o"});
  ASSERT_EQ(cmd.search.size(), 4U);
  EXPECT_EQ(cmd.search[0].path, "/q");
  EXPECT_EQ(cmd.search[1].path, "/i");
  EXPECT_EQ(cmd.search[2].path, "/sys");
  EXPECT_EQ(cmd.search[3].path, "/after");
  EXPECT_EQ(cmd.deps, DepStyle::kNonSystem);
}

TEST(CommandLine, DebugInformationIsNoticedAlsoThroughTheHostCompiler) {
  EXPECT_TRUE(parse_compile(CompilerKind::kGcc, {"-g", "-c", "a.cpp", "-o", "a.o"}).debug);
  EXPECT_TRUE(parse_compile(CompilerKind::kNvcc, {"-Xcompiler", "-fPIC,-g", "-c", "a.cu", "-o", "a.o"}).debug);
  EXPECT_TRUE(parse_compile(CompilerKind::kNvcc, {"-lineinfo", "-c", "a.cu", "-o", "a.o"}).debug);
  // -gencode is not -g.
  EXPECT_FALSE(
      parse_compile(CompilerKind::kNvcc, {"-gencode", "arch=compute_90,code=sm_90", "-c", "a.cu", "-o", "a.o"}).debug);
}

TEST(CommandLine, WhatTheCacheLeavesAlone) {
  const auto why = [](CompilerKind kind, std::vector<std::string> args) {
    return parse_compile(kind, args).uncacheable;
  };
  EXPECT_NE(why(CompilerKind::kGcc, {"a.o", "b.o", "-shared", "-o", "x.so"}), "");  // a link
  EXPECT_NE(why(CompilerKind::kGcc, {"-E", "a.c", "-o", "a.i", "-c"}), "");
  EXPECT_NE(why(CompilerKind::kGcc, {"-c", "a.c", "b.c"}), "");  // two sources
  EXPECT_NE(why(CompilerKind::kGcc, {"-c", "a.c"}), "");         // no -o
  EXPECT_NE(why(CompilerKind::kGcc, {"@args.rsp", "-c", "a.c", "-o", "a.o"}), "");
  EXPECT_NE(why(CompilerKind::kGcc, {"-march=native", "-c", "a.c", "-o", "a.o"}), "");
  EXPECT_NE(why(CompilerKind::kNvcc, {"-arch", "native", "-c", "a.cu", "-o", "a.o"}), "");
  EXPECT_NE(why(CompilerKind::kGcc, {"-MD", "-MF", "a.d", "-MT", "x", "-c", "a.c", "-o", "a.o"}), "");
  EXPECT_NE(why(CompilerKind::kGcc, {"-MD", "-c", "a.c", "-o", "a.o"}), "");  // no -MF
  EXPECT_NE(why(CompilerKind::kGcc, {"-save-temps", "-c", "a.c", "-o", "a.o"}), "");
  // An option this parser does not know that takes a value shows up as a second operand.
  EXPECT_NE(why(CompilerKind::kNvcc, {"--unknown-option", "value", "-c", "a.cu", "-o", "a.o"}), "");
  EXPECT_EQ(why(CompilerKind::kGcc, {"-O2", "-DX=1", "-c", "a.c", "-o", "a.o"}), "");
}

}  // namespace

// CMake's Ninja generator, rule CUDA_COMPILER__flash_attn: the launcher, then nvcc with the
// depfile's target named, -x cu, and the gencode as the recipe writes it.
std::vector<std::string> cmake_nvcc_args(const std::string& stage);
std::vector<std::string> cmake_nvcc_args(const std::string& stage) {
  const std::string object = "CMakeFiles/flash_attn.dir" + stage + "/src/csrc/flash_example/src/k.cu.o";
  return {"-forward-unknown-to-host-compiler",
          "-DFLASHATTENTION_DISABLE_CAUSAL",
          "-I" + stage + "/src/csrc/flash_example/src",
          "-isystem",
          "/usr/local/cuda/include",
          "-O3",
          "-std=c++17",
          "-Xcompiler=-fPIC",
          "-gencode=arch=compute_90,code=sm_90",
          "--threads",
          "2",
          "-MD",
          "-MT",
          object,
          "-MF",
          object + ".d",
          "-x",
          "cu",
          "-c",
          stage + "/src/csrc/flash_example/src/k.cu",
          "-o",
          object};
}

namespace {

TEST(CommandLine, CMakesNvccCompileIsCacheableWhenItsDepfileTargetIsTheObject) {
  const auto cmd = parse_compile(CompilerKind::kNvcc, cmake_nvcc_args("/h/.staging/cell"));
  EXPECT_EQ(cmd.uncacheable, "");
  EXPECT_TRUE(cmd.has_dep_target);
  EXPECT_EQ(cmd.args[cmd.dep_target], cmd.output_path());
  EXPECT_EQ(cmd.depfile_path(), cmd.output_path() + ".d");
  // A depfile target other than the output is left alone: a hit's depfile names the output.
  std::vector<std::string> other = cmake_nvcc_args("/h/.staging/cell");
  other[13] = "something-else.o";
  EXPECT_EQ(parse_compile(CompilerKind::kNvcc, other).uncacheable, "-MT something-else.o, not the output");
}

TEST(CommandLine, CompilesAreTold) {
  EXPECT_TRUE(is_compile({"-c", "a.c"}));
  EXPECT_TRUE(is_compile({"--compile", "a.cu"}));
  EXPECT_FALSE(is_compile({"--version"}));
  EXPECT_FALSE(is_compile({"a.o", "-shared", "-o", "a.so"}));
  EXPECT_EQ(compiler_kind("/usr/local/cuda/bin/nvcc"), CompilerKind::kNvcc);
  EXPECT_EQ(compiler_kind("c++"), CompilerKind::kGcc);
}

}  // namespace
}  // namespace fabuild::objcache
