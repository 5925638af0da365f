#include "objcache/normal_form.h"

#include <gtest/gtest.h>

namespace fabuild::objcache {

// tests/objcache/command_line_test.cpp: CMake's nvcc command line for one kernel of a library cell.
std::vector<std::string> cmake_nvcc_args(const std::string& stage);

namespace {

CompileCommand torch_like(const std::string& stage, const std::string& venv, const std::string& py) {
  const std::string site = venv + "/lib/python" + py + "/site-packages";
  return parse_compile(
      CompilerKind::kNvcc,
      {"-MD", "-MF", stage + "/build/temp.linux-x86_64-cpython-3x/k.o.d", "-I" + stage + "/csrc",
       "-I" + stage + "/csrc/src", "-I" + site + "/torch/include",
       "-I" + site + "/torch/include/torch/csrc/api/include", "-I/usr/local/cuda/include",
       "-I/opt/python" + py + "/include/python" + py, "-c", stage + "/csrc/src/k.cu", "-o",
       stage + "/build/temp.linux-x86_64-cpython-3x/k.o", "-O3", "-gencode", "arch=compute_90,code=sm_90"});
}

TEST(NormalForm, TwoPythonTagsOfOneRowHaveTheSameKeyArguments) {
  const auto a = torch_like("/w/.staging/cell-cp311/src", "/c/venvs/cp311-torch2.11", "3.11");
  const auto b = torch_like("/w/.staging/cell-cp312/src", "/c/venvs/cp312-torch2.11", "3.12");
  const NormalForm na(a, "/w/.staging/cell-cp311/src/build/temp.linux-x86_64-cpython-311");
  const NormalForm nb(b, "/w/.staging/cell-cp312/src/build/temp.linux-x86_64-cpython-312");
  EXPECT_EQ(na.key_args(), nb.key_args());
  EXPECT_EQ(na.nesting(), nb.nesting());
  EXPECT_FALSE(na.cwd_in_key());
  EXPECT_EQ(na.key_args()[3], "-I@DIR0@");
  EXPECT_EQ(na.key_args()[2], "@DEPFILE@");
  // A header in torch's include directory is recorded by where it is inside it...
  const std::string header = "/c/venvs/cp311-torch2.11/lib/python3.11/site-packages/torch/include/c10/core/Device.h";
  EXPECT_EQ(na.normalize(header), "@DIR2@/c10/core/Device.h");
  // ...and means the same file of the other environment.
  EXPECT_EQ(nb.resolve(na.normalize(header)),
            "/c/venvs/cp312-torch2.11/lib/python3.12/site-packages/torch/include/c10/core/Device.h");
  EXPECT_EQ(na.normalize("/usr/include/stdio.h"), "/usr/include/stdio.h");
  EXPECT_EQ(nb.resolve("@SOURCE@"), "/w/.staging/cell-cp312/src/csrc/src/k.cu");
}

TEST(NormalForm, CMakeCompilesOfTwoCellsHaveTheSameKeyArguments) {
  // Each library cell's objects and depfile target sit under its own staging directory.
  const auto a = parse_compile(CompilerKind::kNvcc, cmake_nvcc_args("/w/.staging/fa-lib-cu130-minimal"));
  const auto b = parse_compile(CompilerKind::kNvcc, cmake_nvcc_args("/w/.staging/fa-lib-cu130-small"));
  ASSERT_EQ(a.uncacheable, "");
  const NormalForm na(a, "/w/.staging/fa-lib-cu130-minimal/build");
  const NormalForm nb(b, "/w/.staging/fa-lib-cu130-small/build");
  EXPECT_EQ(na.key_args(), nb.key_args());
  EXPECT_EQ(na.key_args()[13], "@OUT@");
}

TEST(NormalForm, NvccsThreadCountIsNotPartOfTheKey) {
  // Machines of other sizes run nvcc with other --threads (NVCC_THREADS from their budgets).
  auto a = torch_like("/w/a", "/v", "3.12");
  auto b = torch_like("/w/b", "/v", "3.12");
  auto c = torch_like("/w/c", "/v", "3.12");
  a.args.insert(a.args.end(), {"--threads", "1"});
  b.args.insert(b.args.end(), {"--threads", "8"});
  c.args.insert(c.args.end(), {"--threads=4"});
  const NormalForm na(a, "/w/a"), nb(b, "/w/b"), nc(c, "/w/c");
  EXPECT_EQ(na.key_args(), nb.key_args());
  EXPECT_EQ(nc.key_args().back(), "--threads=@THREADS@");
  // Another flag still counts.
  auto d = a;
  d.args.push_back("--use_fast_math");
  auto e = b;
  e.args.push_back("--use_fast_math");
  EXPECT_NE(NormalForm(d, "/w/a").key_args(), na.key_args());
  EXPECT_EQ(NormalForm(d, "/w/a").key_args(), NormalForm(e, "/w/b").key_args());
}

TEST(NormalForm, AFlagThatDiffersMakesTheArgumentsDiffer) {
  auto a = torch_like("/a", "/v", "3.11");
  auto b = torch_like("/a", "/v", "3.11");
  b.args.back() = "arch=compute_80,code=sm_80";
  EXPECT_NE(NormalForm(a, "/").key_args(), NormalForm(b, "/").key_args());
}

TEST(NormalForm, NestingOfSearchDirectoriesIsPartOfTheKey) {
  // -Iinc1 and -Iinc2 under the source's directory read alike as tokens, but lie differently.
  const auto one = parse_compile(CompilerKind::kGcc, {"-Iinc1", "-c", "a.c", "-o", "a.o"});
  const auto two = parse_compile(CompilerKind::kGcc, {"-Iinc2", "-c", "a.c", "-o", "a.o"});
  const NormalForm n1(one, "/x");
  const NormalForm n2(two, "/x");
  EXPECT_EQ(n1.key_args(), n2.key_args());
  EXPECT_NE(n1.nesting(), n2.nesting());
  EXPECT_EQ(n1.nesting(), std::vector<std::string>{"@DIR0@ in @SRCDIR@ at /inc1"});
}

TEST(NormalForm, DebugInformationKeepsEveryPath) {
  const auto cmd = parse_compile(CompilerKind::kGcc, {"-g", "-I/inc", "-c", "/src/a.c", "-o", "/out/a.o"});
  const NormalForm n(cmd, "/build");
  EXPECT_TRUE(n.strict());
  EXPECT_TRUE(n.cwd_in_key());
  EXPECT_EQ(n.key_args(), (std::vector<std::string>{"-g", "-I/inc", "-c", "/src/a.c", "-o", "@OUT@"}));
  EXPECT_EQ(n.normalize("/inc/x.h"), "/inc/x.h");
  EXPECT_TRUE(n.nesting().empty());
}

// Two wheelhouses' staging directories of one cell: with each mapped out, the same key.
TEST(NormalForm, DebugCompilesMapTheStagingDirectoryOut) {
  const auto at = [](const std::string& w) {
    return parse_compile(CompilerKind::kGcc,
                         {"-g", "-I" + w + "/src/csrc", "-I/venv/torch/include", "-c", w + "/src/csrc/api.cpp", "-o",
                          w + "/src/build/api.o"},
                         PathStyle::kPosix);  // also where the Windows tests run it (Wine)
  };
  const auto a = at("/h1/.staging/cell");
  const auto b = at("/h2/.staging/cell");
  const NormalForm na(a, "/h1/.staging/cell/src/build", "/h1/.staging/cell");
  const NormalForm nb(b, "/h2/.staging/cell/src/build", "/h2/.staging/cell/");
  EXPECT_TRUE(na.strict());
  EXPECT_EQ(na.mapped_base(), "/h1/.staging/cell");
  EXPECT_EQ(nb.mapped_base(), "/h2/.staging/cell");
  EXPECT_EQ(na.key_args(), nb.key_args());
  EXPECT_EQ(na.key_args(), (std::vector<std::string>{"-g", "-I@BASE@/src/csrc", "-I/venv/torch/include", "-c",
                                                     "@BASE@/src/csrc/api.cpp", "-o", "@OUT@", "@MAPPED@"}));
  EXPECT_EQ(na.key_cwd(), nb.key_cwd());
  EXPECT_EQ(na.key_cwd(), "@BASE@/src/build");
  EXPECT_EQ(na.extra_args(), std::vector<std::string>{"-ffile-prefix-map=/h1/.staging/cell=/fabuild-staging"});
  // Headers under the staging directory are recorded by the token, others as they are.
  EXPECT_EQ(na.normalize("../../src/csrc/x.h"), "@BASE@/src/build/../../src/csrc/x.h");  // ".." kept
  EXPECT_EQ(na.normalize("/h1/.staging/cell/src/csrc/x.h"), "@BASE@/src/csrc/x.h");
  EXPECT_EQ(nb.resolve("@BASE@/src/csrc/x.h"), "/h2/.staging/cell/src/csrc/x.h");
  EXPECT_EQ(na.normalize("/venv/torch/include/t.h"), "/venv/torch/include/t.h");
  // A header found in the second directory could be shadowed by the same name in the first.
  EXPECT_EQ(na.shadow_candidates({"/venv/torch/include/t.h"}), (std::vector<std::string>{"@BASE@/src/csrc/t.h"}));
  EXPECT_TRUE(na.shadow_candidates({"@BASE@/src/csrc/x.h"}).empty());
}

// Without debug information the object still holds __FILE__ (TORCH_CHECK's messages): the staging
// directory is mapped out of it, for gcc and for the host compiler under nvcc.
// POSIX compiles (on Windows too, where the tests run under Wine and the host style is Windows).
TEST(NormalForm, OtherCompilesMapTheStagingDirectoryOutOfFileMacros) {
  const auto gcc = parse_compile(CompilerKind::kGcc, {"-O3", "-c", "/h1/s/src/a.cpp", "-o", "a.o"}, PathStyle::kPosix);
  EXPECT_EQ(NormalForm(gcc, "/h1/s", "/h1/s").extra_args(),
            std::vector<std::string>{"-fmacro-prefix-map=/h1/s=/fabuild-staging"});
  const auto nvcc = parse_compile(CompilerKind::kNvcc, {"-O3", "-c", "/h1/s/src/k.cu", "-o", "k.o"}, PathStyle::kPosix);
  EXPECT_EQ(NormalForm(nvcc, "/h1/s", "/h1/s").extra_args(),
            (std::vector<std::string>{"-Xcompiler", "-fmacro-prefix-map=/h1/s=/fabuild-staging", "-Xcudafe",
                                      "--orig_src_path_name=/fabuild-staging/src/k.cu"}));
  EXPECT_EQ(NormalForm(nvcc, "/h1/s", "/h1/s").module_path(), "/fabuild-staging/src/k.cu");
  const auto outside =
      parse_compile(CompilerKind::kNvcc, {"-O3", "-c", "/elsewhere/k.cu", "-o", "k.o"}, PathStyle::kPosix);
  EXPECT_EQ(NormalForm(outside, "/h1/s", "/h1/s").extra_args(),
            (std::vector<std::string>{"-Xcompiler", "-fmacro-prefix-map=/h1/s=/fabuild-staging"}))
      << "a source outside the staging directory keeps nvcc's own path";
  EXPECT_TRUE(NormalForm(gcc, "/h1/s", "/h1/s").module_path().empty()) << "gcc has no module id";
  EXPECT_TRUE(NormalForm(nvcc, "/h1/s").extra_args().empty()) << "not told the staging directory";
  const auto own = parse_compile(CompilerKind::kGcc, {"-fmacro-prefix-map=/x=.", "-c", "/h1/s/a.cpp", "-o", "a.o"},
                                 PathStyle::kPosix);
  EXPECT_TRUE(NormalForm(own, "/h1/s", "/h1/s").extra_args().empty()) << "it maps its own";
}

// Each CI job has a Python environment of its own: torch's headers there name their path in
// __FILE__ (TORCH_INTERNAL_ASSERT), so the environment is mapped out like the staging directory:
// in __FILE__ always, in debug information and in a strict key when the staging directory is.
TEST(NormalForm, ThePythonEnvironmentIsMappedOutAsTheStagingDirectoryIs) {
  const auto gcc = parse_compile(CompilerKind::kGcc, {"-O3", "-c", "/h1/s/src/a.cpp", "-o", "a.o"}, PathStyle::kPosix);
  EXPECT_EQ(NormalForm(gcc, "/h1/s", "/h1/s", "/job1/venvs/cp312").extra_args(),
            (std::vector<std::string>{"-fmacro-prefix-map=/h1/s=/fabuild-staging",
                                      "-fmacro-prefix-map=/job1/venvs/cp312=/fabuild-env"}));
  EXPECT_EQ(NormalForm(gcc, "/h1/s", "", "/job1/venvs/cp312").extra_args(),
            std::vector<std::string>{"-fmacro-prefix-map=/job1/venvs/cp312=/fabuild-env"});
  const auto nvcc = parse_compile(CompilerKind::kNvcc, {"-O3", "-c", "/h1/s/src/k.cu", "-o", "k.o"}, PathStyle::kPosix);
  EXPECT_EQ(NormalForm(nvcc, "/h1/s", "/h1/s", "/job1/venvs/cp312").extra_args(),
            (std::vector<std::string>{"-Xcompiler", "-fmacro-prefix-map=/h1/s=/fabuild-staging", "-Xcompiler",
                                      "-fmacro-prefix-map=/job1/venvs/cp312=/fabuild-env", "-Xcudafe",
                                      "--orig_src_path_name=/fabuild-staging/src/k.cu"}));
  EXPECT_EQ(NormalForm(gcc, "/h1/s", "/h1/s", "/h1/s/venv").extra_args(),
            std::vector<std::string>{"-fmacro-prefix-map=/h1/s=/fabuild-staging"})
      << "an environment inside the staging directory is mapped with it";
  const auto at = [](const std::string& w, const std::string& env) {
    return parse_compile(CompilerKind::kGcc,
                         {"-g", "-I" + env + "/torch/include", "-c", w + "/src/api.cpp", "-o", w + "/src/api.o"},
                         PathStyle::kPosix);
  };
  const auto a = at("/h1/s", "/job1/venv");
  const auto b = at("/h2/s", "/job22/venv");
  const NormalForm na(a, "/h1/s/src", "/h1/s", "/job1/venv");
  const NormalForm nb(b, "/h2/s/src", "/h2/s", "/job22/venv");
  EXPECT_EQ(na.key_args(), nb.key_args());
  EXPECT_EQ(na.normalize("/job1/venv/torch/include/t.h"), "@ENV@/torch/include/t.h");
  EXPECT_EQ(nb.resolve("@ENV@/torch/include/t.h"), "/job22/venv/torch/include/t.h");
  EXPECT_EQ(na.extra_args(), (std::vector<std::string>{"-ffile-prefix-map=/h1/s=/fabuild-staging",
                                                       "-ffile-prefix-map=/job1/venv=/fabuild-env"}));
}

TEST(NormalForm, DebugCompilesStayLiteralWithoutABaseOrWithTheirOwnPrefixMap) {
  const auto own = parse_compile(CompilerKind::kGcc, {"-g", "-ffile-prefix-map=/w=.", "-c", "/w/a.c", "-o", "a.o"});
  EXPECT_TRUE(NormalForm(own, "/w", "/w").mapped_base().empty());
  EXPECT_TRUE(NormalForm(own, "/w", "/w").extra_args().empty());
  const auto plain = parse_compile(CompilerKind::kGcc, {"-g", "-c", "/w/a.c", "-o", "a.o"});
  EXPECT_TRUE(NormalForm(plain, "/w").mapped_base().empty());
  EXPECT_EQ(NormalForm(plain, "/w").normalize("/w/x.h"), "/w/x.h");
  EXPECT_TRUE(NormalForm(plain, "/w", "relative").mapped_base().empty());
  // Windows' compiles (cl.exe, MinGW's gcc) are left as they are.
  const auto windows = parse_compile(CompilerKind::kGcc, {"-g", "-c", "C:/w/a.c", "-o", "a.o"}, PathStyle::kWindows);
  EXPECT_TRUE(NormalForm(windows, "C:/w", "C:/w").mapped_base().empty());
  // A non-debug compile abstracts every directory already; the base changes nothing.
  const auto normal = parse_compile(CompilerKind::kGcc, {"-c", "/w/a.c", "-o", "a.o"});
  EXPECT_TRUE(NormalForm(normal, "/w", "/w").mapped_base().empty());
}

// nvcc's device code names its files through nvcc's own preprocessing, which no prefix map
// rewrites: a compile with line information runs through a view of the staging directory named
// after the compile, and is keyed with the staging directory mapped out (POSIX paths: a Windows
// compile is left as it is, wherever the test runs).
TEST(NormalForm, NvccWithLineInformationRunsThroughAViewOfTheStagingDirectory) {
  const auto cmd =
      parse_compile(CompilerKind::kNvcc,
                    {"-lineinfo", "-I/w/s/inc", "-MD", "-MF", "/w/s/b/k.o.d", "-c", "/w/s/k.cu", "-o", "/w/s/b/k.o"},
                    PathStyle::kPosix);
  const NormalForm here(cmd, "/w/s/b", "/w/s");
  EXPECT_EQ(here.mapped_base(), "/w/s");
  ASSERT_TRUE(here.view().starts_with(std::string(NormalForm::kViewRoot) + "/")) << here.view();
  const std::string v = here.view();
  // The output and the depfile as the build named them; the rest under the view.
  EXPECT_EQ(here.run_args(), (std::vector<std::string>{"-lineinfo", "-I" + v + "/inc", "-MD", "-MF", "/w/s/b/k.o.d",
                                                       "-c", v + "/k.cu", "-o", "/w/s/b/k.o"}));
  EXPECT_EQ(here.from_view(v + "/inc/x.cuh"), "/w/s/inc/x.cuh");
  EXPECT_EQ(here.from_view("/usr/local/cuda/include/cuda.h"), "/usr/local/cuda/include/cuda.h");
  EXPECT_EQ(here.normalize(here.from_view(v + "/inc/x.cuh")), "@BASE@/inc/x.cuh");
  // The same compile in another staging directory: the same view, the same key's arguments.
  const auto there_cmd = parse_compile(
      CompilerKind::kNvcc,
      {"-lineinfo", "-I/x/yy/inc", "-MD", "-MF", "/x/yy/b/k.o.d", "-c", "/x/yy/k.cu", "-o", "/x/yy/b/k.o"},
      PathStyle::kPosix);
  const NormalForm there(there_cmd, "/x/yy/b", "/x/yy");
  EXPECT_EQ(there.view(), v);
  EXPECT_EQ(there.key_args(), here.key_args());
  EXPECT_EQ(there.key_cwd(), here.key_cwd());
  // Another compile (other flags) another view; without line information, none.
  const auto other = parse_compile(CompilerKind::kNvcc, {"-lineinfo", "-O3", "-c", "/w/s/k.cu", "-o", "/w/s/b/k.o"},
                                   PathStyle::kPosix);
  EXPECT_NE(NormalForm(other, "/w/s/b", "/w/s").view(), v);
  const auto plain = parse_compile(CompilerKind::kNvcc, {"-c", "/w/s/k.cu", "-o", "/w/s/b/k.o"}, PathStyle::kPosix);
  EXPECT_TRUE(NormalForm(plain, "/w/s/b", "/w/s").view().empty());
  // Not told the staging directory, or a source outside it: no view, keyed by its real paths.
  EXPECT_TRUE(NormalForm(cmd, "/w/s/b").view().empty());
  EXPECT_TRUE(NormalForm(cmd, "/w/s/b").mapped_base().empty());
  EXPECT_TRUE(NormalForm(cmd, "/w/s/b", "/elsewhere").view().empty());
}

TEST(NormalForm, RelativeInputsPutTheWorkingDirectoryInTheKey) {
  const auto cmd = parse_compile(CompilerKind::kGcc, {"-include", "pre.h", "-c", "/s/a.c", "-o", "a.o"});
  EXPECT_TRUE(NormalForm(cmd, "/b").cwd_in_key());
  EXPECT_EQ(NormalForm(cmd, "/b").normalize("sub/./x.h"), "/b/sub/x.h");
}

TEST(NormalForm, ShadowCandidatesAreEarlierDirectoriesAndSystemNames) {
  const auto cmd = parse_compile(CompilerKind::kGcc, {"-I/p", "-I/q", "-c", "/s/a.c", "-o", "a.o"});
  const NormalForm n(cmd, "/");
  const auto c = n.shadow_candidates({"@SOURCE@", "@DIR1@/x/y.h", "@DIR0@/first.h", "/usr/include/c++/12/vector"});
  const auto has = [&](const std::string& s) { return std::find(c.begin(), c.end(), s) != c.end(); };
  EXPECT_TRUE(has("@SRCDIR@/x/y.h"));  // searched before /q for #include "x/y.h"
  EXPECT_TRUE(has("@DIR0@/x/y.h"));    // -I/p before -I/q
  EXPECT_FALSE(has("@DIR1@/x/y.h"));   // the file itself
  EXPECT_TRUE(has("@SRCDIR@/first.h"));
  EXPECT_FALSE(has("@DIR1@/first.h"));  // searched after the one that supplied it
  EXPECT_TRUE(has("@DIR1@/vector"));    // a system header: its name in every search directory
  EXPECT_TRUE(has("@DIR0@/c++/12/vector"));
}

TEST(NormalForm, LexicallyClean) {
  EXPECT_EQ(lexically_clean("/a/./b//c/"), "/a/b/c");
  EXPECT_EQ(lexically_clean("/a/../b"), "/a/../b");
  EXPECT_EQ(lexically_clean("a/b"), "a/b");
  EXPECT_EQ(lexically_clean("/"), "/");
}

}  // namespace
}  // namespace fabuild::objcache
