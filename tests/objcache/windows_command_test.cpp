// The object cache's reading of Windows command lines (PathStyle::kWindows): platform-free, so
// these run on Linux as well as in the cross-built objcache_tests.exe under Wine.
#include <gtest/gtest.h>

#include "objcache/command_line.h"
#include "objcache/depfile.h"
#include "objcache/normal_form.h"

namespace fabuild::objcache {
namespace {

// torch's cuda_compile rule on Windows for one kernel of a cell: nvcc with cl.exe as its host
// compiler, the cell's staging directory and its virtualenv's torch headers.
std::vector<std::string> windows_nvcc(const std::string& stage, const std::string& venv, const std::string& py) {
  const std::string site = venv + "\\Lib\\site-packages";
  return {"--generate-dependencies-with-compile",
          "--dependency-output",
          stage + "\\build\\temp.win-amd64-cpython-" + py + "\\Release\\csrc\\k.obj.d",
          "--use-local-env",
          "-Xcompiler",
          "/MD",
          "-Xcompiler",
          "/wd4819",
          "-Xcompiler=/EHsc,/Zc:__cplusplus",
          "-I" + stage + "\\csrc",
          "-I" + site + "\\torch\\include",
          "-I" + site + "\\torch\\include\\torch\\csrc\\api\\include",
          "-IC:\\CUDA\\v12.8\\include",
          "-IC:\\Python" + py + "\\include",
          "-c",
          stage + "\\csrc\\k.cu",
          "-o",
          stage + "\\build\\temp.win-amd64-cpython-" + py + "\\Release\\csrc\\k.obj",
          "-O3",
          "-gencode",
          "arch=compute_80,code=sm_80",
          "--threads",
          "2",
          "-ccbin",
          "cl"};
}

TEST(WindowsCommand, TwoPythonTagsOfARowHaveTheSameKeyArguments) {
  const auto a = parse_compile(
      CompilerKind::kNvcc, windows_nvcc("C:\\wh\\.staging\\cell-cp311\\src", "C:\\fc\\venvs\\cp311-torch2.8", "311"),
      PathStyle::kWindows);
  const auto b = parse_compile(
      CompilerKind::kNvcc, windows_nvcc("C:\\wh\\.staging\\cell-cp312\\src", "C:\\fc\\venvs\\cp312-torch2.8", "312"),
      PathStyle::kWindows);
  ASSERT_EQ(a.uncacheable, "");
  EXPECT_FALSE(a.relative_inputs);  // -ccbin cl: a name on PATH, not a path from the working directory
  const NormalForm na(a, "C:\\wh\\.staging\\cell-cp311\\src");
  const NormalForm nb(b, "C:\\wh\\.staging\\cell-cp312\\src");
  EXPECT_EQ(na.key_args(), nb.key_args());
  EXPECT_EQ(na.nesting(), nb.nesting());
  EXPECT_FALSE(na.cwd_in_key());
  EXPECT_EQ(na.key_args()[10], "-I@DIR1@");
  // A header as nvcc's depfile names it (forward slashes, another case) is the same file.
  const std::string header = "c:/FC/venvs/cp311-torch2.8/lib/site-packages/torch/include/c10/core/Device.h";
  EXPECT_EQ(na.normalize(header), "@DIR1@/c10/core/Device.h");
  EXPECT_EQ(nb.resolve(na.normalize(header)),
            "C:/fc/venvs/cp312-torch2.8/Lib/site-packages/torch/include/c10/core/Device.h");
  EXPECT_EQ(na.normalize("C:\\wh\\.staging\\cell-cp311\\src\\csrc\\k.cu"), "@SOURCE@");
  // Headers outside every search directory (MSVC's, the SDK's) keep their absolute path.
  EXPECT_EQ(na.normalize("C:\\VS\\VC\\include\\vector"), "C:/VS/VC/include/vector");
}

TEST(WindowsCommand, DirectoriesNestAlikeWhateverTheirCase) {
  const auto a = parse_compile(CompilerKind::kNvcc,
                               {"-IC:\\V\\Include", "-Ic:/v/include/torch", "-c", "C:\\s\\k.cu", "-o", "k.obj"},
                               PathStyle::kWindows);
  const NormalForm na(a, "C:\\s");
  ASSERT_EQ(na.nesting().size(), 1U);
  EXPECT_EQ(na.nesting()[0], "@DIR1@ in @DIR0@ at /torch");
}

TEST(WindowsCommand, RelativePathsAreFromTheWorkingDirectoryAndItsDrive) {
  const auto c = parse_compile(CompilerKind::kNvcc, {"-I..\\inc", "-c", "k.cu", "-o", "k.obj"}, PathStyle::kWindows);
  const NormalForm n(c, "D:\\build\\x");
  EXPECT_EQ(n.absolute("..\\inc\\a.h"), "D:/build/x/../inc/a.h");
  EXPECT_EQ(n.absolute("\\top\\a.h"), "D:/top/a.h");
  EXPECT_EQ(n.absolute("\\\\host\\share\\a.h"), "//host/share/a.h");
  EXPECT_EQ(n.resolve("@SOURCE@"), "D:/build/x/k.cu");
}

TEST(WindowsCommand, MsvcDebugInformationIsStrict) {
  for (const char* zi : {"/Zi", "/Z7", "-Z7"}) {
    const auto c =
        parse_compile(CompilerKind::kNvcc, {"-Xcompiler", std::string("/MD,") + zi, "-c", "C:\\s\\k.cu", "-o", "k.obj"},
                      PathStyle::kWindows);
    EXPECT_EQ(c.uncacheable, "") << zi;
    EXPECT_TRUE(c.debug) << zi;
  }
}

TEST(WindowsCommand, APathOptionRelativeToTheWorkingDirectoryPutsItInTheKey) {
  const auto rel = parse_compile(CompilerKind::kNvcc, {"-ccbin", "vs\\cl.exe", "-c", "C:\\s\\k.cu", "-o", "k.obj"},
                                 PathStyle::kWindows);
  EXPECT_TRUE(rel.relative_inputs);
  const auto abs = parse_compile(
      CompilerKind::kNvcc, {"-ccbin", "C:\\VS\\bin\\cl.exe", "-c", "C:\\s\\k.cu", "-o", "k.obj"}, PathStyle::kWindows);
  EXPECT_FALSE(abs.relative_inputs);
  // On POSIX, "C:\x" is a relative name like any other.
  EXPECT_FALSE(is_absolute_path(PathStyle::kPosix, "C:\\x"));
  EXPECT_TRUE(is_absolute_path(PathStyle::kWindows, "C:/x"));
  EXPECT_FALSE(is_absolute_path(PathStyle::kWindows, "C:x"));
}

TEST(WindowsCommand, NvccIsKnownByItsFileName) {
  EXPECT_EQ(compiler_kind("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8\\bin\\nvcc.exe"),
            CompilerKind::kNvcc);
  EXPECT_EQ(compiler_kind("C:\\nvcc-tools\\cl.exe"), CompilerKind::kGcc);
}

TEST(WindowsCommand, ResponseFilesSplitAsWindowsSplitsACommandLine) {
  EXPECT_EQ(split_response_file("-IC:\\a\\b  -c\r\n\"C:\\Program Files\\x.cu\" -o k.obj\n"),
            (std::vector<std::string>{"-IC:\\a\\b", "-c", "C:\\Program Files\\x.cu", "-o", "k.obj"}));
  EXPECT_EQ(split_response_file("\"-DX=\\\"y\\\"\" a\\\\\\\"b \"c d\\\\\" \"\""),
            (std::vector<std::string>{"-DX=\"y\"", "a\\\"b", "c d\\", ""}));
}

TEST(WindowsCommand, ADepfileWithDriveLettersAndEscapedSpaces) {
  const auto d =
      parse_depfile("C:/b/k.obj: C:/s/k.cu \\\n C:\\Program\\ Files\\VS\\include\\vector \\\r\n  c:/s/inc/a.h\r\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->target, "C:/b/k.obj");
  EXPECT_EQ(d->deps, (std::vector<std::string>{"C:/s/k.cu", "C:\\Program Files\\VS\\include\\vector", "c:/s/inc/a.h"}));
}

}  // namespace
}  // namespace fabuild::objcache
