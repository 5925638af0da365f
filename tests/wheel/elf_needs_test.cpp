// What shared objects need of glibc and libstdc++: real objects compiled by the machine's c++
// for the test, read by fabuild (libelf) and by binutils' readelf, which must agree.

#include "wheel/elf_needs.h"

#include <gmock/gmock.h>
#include <gnu/libc-version.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;

// memcpy is GLIBC_2.14 on x86_64; pthread_create moved into libc as GLIBC_2.34 (it is
// GLIBC_2.2.5 in libpthread before); std::string of the C++11 ABI is GLIBCXX_3.4.21.
const char* kModule = R"(#include <pthread.h>
#include <cstring>
#include <string>
static void* work(void* p) { return p; }
extern "C" int start(char* dst, const char* src, unsigned long n) {
  std::memcpy(dst, src, n);
  pthread_t t;
  if (pthread_create(&t, nullptr, work, nullptr) != 0) return -1;
  return pthread_join(t, nullptr);
}
extern "C" unsigned long text(unsigned long n) { return std::string(n, 'x').append("y").size(); }
)";

fs::path compile(const fs::path& dir, const std::string& name, const std::string& source,
                 const std::string& flags = "") {
  std::ofstream(dir / (name + ".cpp")) << source;
  const fs::path so = dir / name;
  const std::string cmd =
      "c++ -shared -fPIC -O1 " + flags + " -o '" + so.string() + "' '" + (dir / (name + ".cpp")).string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return so;
}

// readelf -V's version needs section: "  000000: Version: 1  File: libc.so.6  Cnt: 3" and
// "  0x0010:   Name: GLIBC_2.14  Flags: none  Version: 5" lines, up to the blank line after it.
VersionNeeds readelf_needs(const fs::path& so) {
  const std::string cmd = "readelf -V --wide '" + so.string() + "'";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << cmd;
  VersionNeeds needs;
  if (pipe == nullptr) return needs;
  char line[1024];
  bool inside = false;
  std::string file;
  const std::regex file_re(R"(File: (\S+))");
  const std::regex name_re(R"(Name: (\S+))");
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    const std::string text(line);
    if (text.find("Version needs section") != std::string::npos) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (text.find_first_not_of(" \n") == std::string::npos) break;
    std::smatch m;
    if (std::regex_search(text, m, file_re)) {
      file = m[1];
      needs[file];
    } else if (std::regex_search(text, m, name_re)) {
      needs[file].insert(m[1]);
    }
  }
  EXPECT_EQ(::pclose(pipe), 0) << cmd;
  return needs;
}

TEST(ElfNeeds, ReadsTheVersionNeedsReadelfShows) {
  test::ScratchDir dir("elf-needs");
  const fs::path so = compile(dir.path(), "module.so", kModule);
  const VersionNeeds expected = readelf_needs(so);
  ASSERT_TRUE(expected.count("libc.so.6")) << "readelf shows no needs of libc.so.6: the test proves nothing";
  const std::optional<VersionNeeds> read = elf_version_needs(so).value();
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, expected);
  EXPECT_THAT(read->at("libc.so.6"), Contains("GLIBC_2.14"));
  EXPECT_THAT(read->at("libstdc++.so.6"), Contains("GLIBCXX_3.4.21"));
}

TEST(ElfNeeds, TheFloorIsTheHighestGlibcVersionAsTheRunningGlibcProvidesIt) {
  test::ScratchDir dir("elf-needs");
  const SystemFloor floor = system_floor(*elf_version_needs(compile(dir.path(), "module.so", kModule)).value());
  const std::string running = gnu_get_libc_version();
  // Linked against this glibc: pthread_create@GLIBC_2.34 from 2.34 on, else memcpy@GLIBC_2.14 is
  // the highest. Never more than the glibc it was linked against.
  EXPECT_EQ(floor.glibc, version_lower(running, "2.34") ? "2.14" : "2.34") << "glibc " << running;
  EXPECT_FALSE(version_lower(running, floor.glibc));
  EXPECT_FALSE(floor.glibcxx.empty());
  EXPECT_FALSE(version_lower(floor.glibcxx, "3.4.21")) << floor.glibcxx;
}

TEST(ElfNeeds, VersionsCompareAsNumbers) {
  EXPECT_TRUE(version_lower("2.9", "2.17"));
  EXPECT_FALSE(version_lower("2.17", "2.9"));
  EXPECT_TRUE(version_lower("2.17", "2.28"));
  EXPECT_TRUE(version_lower("2.3", "2.3.4"));
  EXPECT_FALSE(version_lower("2.28", "2.28"));
  EXPECT_TRUE(version_lower("PRIVATE", "2.2.5"));
  // Read as text, "2.9" would be the floor of these and "3.4.9" the libstdc++ one.
  const VersionNeeds needs = {
      {"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.9", "GLIBC_2.17", "GLIBC_PRIVATE"}},
      {"libstdc++.so.6", {"GLIBCXX_3.4.9", "GLIBCXX_3.4.30", "CXXABI_1.3.13"}},
  };
  EXPECT_EQ(system_floor(needs), (SystemFloor{"2.17", "3.4.30"}));
}

TEST(ElfNeeds, EveryGlibcLibraryCountsAndNoOtherLibrary) {
  const VersionNeeds needs = {
      {"libc.so.6", {"GLIBC_2.14"}},
      {"libm.so.6", {"GLIBC_2.29"}},
      {"ld-linux-x86-64.so.2", {"GLIBC_2.3"}},
      {"libcrypt.so.1", {"GLIBC_2.99"}},  // libxcrypt's compatibility versions
      {"libcudart.so.13", {"libcudart.so.13"}},
      {"libgcc_s.so.1", {"GCC_3.0"}},
  };
  EXPECT_EQ(system_floor(needs), (SystemFloor{"2.29", ""}));
  EXPECT_EQ(system_floor({{"libpthread.so.0", {"GLIBC_2.2.5", "GLIBC_2.12"}}}).glibc, "2.12");
  EXPECT_EQ(system_floor({{"libdl.so.2", {"GLIBC_2.3.4"}}}).glibc, "2.3.4");
  EXPECT_EQ(system_floor({}), SystemFloor{});
  SystemFloor together{"2.17", "3.4.30"};
  raise_floor(together, SystemFloor{"2.28", "3.4.21"});
  EXPECT_EQ(together, (SystemFloor{"2.28", "3.4.30"}));
}

TEST(ElfNeeds, AnObjectWithoutVersionedSymbolsNeedsNothingAndANonElfFileIsNotRead) {
  test::ScratchDir dir("elf-needs");
  const fs::path bare = compile(dir.path(), "bare.so", "extern \"C\" int f(int x) { return x + 1; }\n", "-nostdlib");
  EXPECT_EQ(elf_version_needs(bare).value(), VersionNeeds{});
  std::ofstream(dir.path() / "script.so") << "/* GNU ld script */\nINPUT(libc.so.6)\n";
  EXPECT_EQ(elf_version_needs(dir.path() / "script.so").value(), std::nullopt);
  const auto absent = elf_version_needs(dir.path() / "absent.so");
  ASSERT_FALSE(absent);
  EXPECT_NE(absent.error().what.find("absent.so"), std::string::npos) << absent.error().what;
}

TEST(ElfNeeds, AnUnpackedWheelsFloorIsThatOfItsNeediestModule) {
  test::ScratchDir dir("elf-needs");
  fs::create_directories(dir.path() / "pkg" / "pkg.libs");
  compile(dir.path() / "pkg", "_C.cpython-312-x86_64-linux-gnu.so", kModule);
  compile(dir.path() / "pkg" / "pkg.libs", "libbare.so.1.2", "extern \"C\" int f(int x) { return x; }\n", "-nostdlib");
  std::ofstream(dir.path() / "pkg" / "ld-script.so") << "INPUT(libc.so.6)\n";  // not ELF: left out
  std::ofstream(dir.path() / "pkg" / "notes.so.txt") << "\177ELF, but not by its name\n";
  const SystemFloor one =
      system_floor(*elf_version_needs(dir.path() / "pkg" / "_C.cpython-312-x86_64-linux-gnu.so").value());
  const TreeFloor found = tree_floor(dir.path()).value();
  EXPECT_EQ(found.objects, 2U);
  EXPECT_EQ(found.floor, one);
  EXPECT_EQ(found.glibc_from.filename(), "_C.cpython-312-x86_64-linux-gnu.so");
  // A win_amd64 wheel: PE modules only.
  test::ScratchDir pe("elf-needs-pe");
  std::ofstream(pe.path() / "_C.cp312-win_amd64.pyd") << "MZ";
  EXPECT_EQ(tree_floor(pe.path()).value().objects, 0U);
  EXPECT_FALSE(tree_floor(pe.path() / "absent")) << "a directory that cannot be read";
}

}  // namespace
}  // namespace fabuild
