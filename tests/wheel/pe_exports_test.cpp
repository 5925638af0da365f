// The PE export reader and the export check on a real DLL, built for the test by mingw-w64's
// g++ (Debian's mingw-w64): Itanium names, an MSVC-decorated name, an extern "C" function,
// exported data and a forwarder; then on truncated and corrupted copies of it, which must be
// refused or read exactly as the whole file, never read past their end.

#include "wheel/pe_exports.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>

#include "../support/scratch_dir.h"
#include "util/path_search.h"
#include "wheel/exports.h"
#include "wheel/symbol_names.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kCompiler = "x86_64-w64-mingw32-g++";

const char* kLibrary = R"(#include <vector>
namespace flash {
std::vector<int> mha_fwd(const std::vector<int>& q, bool causal) { return causal ? q : std::vector<int>{}; }
int mha_bwd(int x) { return x + 1; }
int use_helper(int x) { return x * 2; }
}
extern "C" int flash_c_entry(int x) { return x; }
extern "C" int decorated_body(int x) { return x + 3; }
extern "C" { int exported_data = 7; }
)";

// What the DLL exports, as a MSVC-built .pyd would name some of them: mha_bwd is left out (a
// function a Windows build does not export), one export is data and one is forwarded.
const char* kDefinitions = R"(EXPORTS
  _ZN5flash7mha_fwdERKSt6vectorIiSaIiEEb
  _ZN5flash10use_helperEi
  flash_c_entry
  "?mha_varlen_fwd@flash@@YAHH@Z" = decorated_body
  exported_data DATA
  tick = KERNEL32.GetTickCount
)";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class PeExports : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_in_path(kCompiler, std::getenv("PATH") ? std::getenv("PATH") : "").empty()) {
      GTEST_SKIP() << kCompiler << " is not installed (apt-get install mingw-w64): no DLL to read";
    }
    std::ofstream(dir_.path() / "lib.cpp") << kLibrary;
    std::ofstream(dir_.path() / "lib.def") << kDefinitions;
    dll_ = dir_.path() / "flash_attn_2_cuda.cp312-win_amd64.pyd";
    const std::string cmd = std::string(kCompiler) + " -shared -O1 -s -static-libgcc -static-libstdc++ -o '" +
                            dll_.string() + "' '" + (dir_.path() / "lib.cpp").string() + "' '" +
                            (dir_.path() / "lib.def").string() + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    image_ = slurp(dll_);
  }

  test::ScratchDir dir_{"pe-exports"};
  fs::path dll_;
  std::string image_;
};

TEST_F(PeExports, ReadsEveryNamedExportWithWhatItIs) {
  const auto read = read_pe_exports_file(dll_);
  ASSERT_TRUE(read) << read.error().what;
  EXPECT_EQ(read->dll_name, "flash_attn_2_cuda.cp312-win_amd64.pyd");
  std::vector<std::string> names;
  for (const auto& e : read->exports) names.push_back(e.name);
  EXPECT_THAT(names, ElementsAre("?mha_varlen_fwd@flash@@YAHH@Z", "_ZN5flash10use_helperEi",
                                 "_ZN5flash7mha_fwdERKSt6vectorIiSaIiEEb", "exported_data", "flash_c_entry", "tick"));
  for (const auto& e : read->exports) {
    EXPECT_EQ(e.code, e.name != "exported_data" && e.name != "tick") << e.name;
    EXPECT_EQ(e.forwarded, e.name == "tick") << e.name;
  }
}

TEST_F(PeExports, TheExportCheckReadsAPydAsItReadsAnElfLibrary) {
  const ExportCheck check = check_exports(dll_, {"mha_fwd", "flash::use_helper", "flash_c_entry", "mha_varlen_fwd",
                                                 "mha_bwd", "exported_data", "tick"})
                                .value();
  EXPECT_THAT(check.found.at("mha_fwd"), HasSubstr("flash::mha_fwd(std::vector<int, std::allocator<int> > const&,"));
  EXPECT_EQ(check.found.at("flash::use_helper"), "flash::use_helper(int)");
  EXPECT_EQ(check.found.at("flash_c_entry"), "flash_c_entry");
  // An MSVC name matches by the name it decorates; its signature is what the linker matches.
  EXPECT_EQ(check.found.at("mha_varlen_fwd"), "?mha_varlen_fwd@flash@@YAHH@Z");
  // Not exported, data, and a forwarder to another DLL are no entry points of this library.
  EXPECT_THAT(check.missing, ElementsAre("mha_bwd", "exported_data", "tick"));
}

TEST_F(PeExports, EveryTruncatedCopyIsRefusedOrReadAsTheWholeFile) {
  const auto whole = read_pe_exports(bytes_of(image_));
  ASSERT_TRUE(whole);
  std::size_t refused = 0;
  for (std::size_t n = 0; n < image_.size(); n += (n < 4096 ? 1 : 61)) {
    const std::string cut = image_.substr(0, n);
    const auto read = read_pe_exports(bytes_of(cut));
    if (!read) {
      ++refused;
      EXPECT_FALSE(read.error().what.empty());
      continue;
    }
    ASSERT_EQ(read->exports.size(), whole->exports.size()) << "cut at " << n;
    for (std::size_t i = 0; i < read->exports.size(); ++i) EXPECT_EQ(read->exports[i].name, whole->exports[i].name);
  }
  EXPECT_GT(refused, 0u);
}

// Sets a little-endian field of `size` bytes at `at`.
void poke(std::string& image, std::size_t at, std::uint64_t value, int size) {
  for (int i = 0; i < size; ++i) image[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
std::uint32_t peek32(const std::string& image, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(image[at + i]);
  return v;
}

TEST_F(PeExports, CorruptHeadersAndTablesAreRefusedWithAReason) {
  const std::size_t pe = peek32(image_, 0x3c);
  const std::size_t optional = pe + 24;
  const std::uint32_t export_rva = peek32(image_, optional + 112);
  // The export directory's file offset: the test finds it the way the reader does.
  const auto whole = read_pe_exports(bytes_of(image_));
  ASSERT_TRUE(whole);
  const struct {
    const char* what;
    std::size_t at;
    std::uint64_t value;
    int size;
    const char* says;
  } cases[] = {
      {"PE header offset past the end", 0x3c, 0x7ffffff0, 4, "no PE signature"},
      {"not PE32 or PE32+", optional, 0x1234, 2, "neither PE32 nor PE32+"},
      {"65535 sections", pe + 6, 0xffff, 2, "sections"},
      {"optional header too small", pe + 20, 8, 2, "no data directories"},
      {"export directory outside the image", optional + 112, 0x7fff0000, 4, "not inside the file"},
  };
  for (const auto& c : cases) {
    std::string bad = image_;
    poke(bad, c.at, c.value, c.size);
    const auto read = read_pe_exports(bytes_of(bad));
    ASSERT_FALSE(read) << c.what;
    EXPECT_THAT(read.error().what, HasSubstr(c.says)) << c.what;
  }
  // The export directory's counts and tables, found through a search for its name RVA field:
  // its first 12 bytes are flags, time stamp and version; then the DLL name's RVA.
  std::size_t dir = std::string::npos;
  for (std::size_t at = 0; at + 40 <= image_.size(); at += 4) {
    if (peek32(image_, at + 20) == 6 && peek32(image_, at + 24) == 6 && peek32(image_, at + 28) > export_rva &&
        peek32(image_, at + 28) < export_rva + 64) {
      dir = at;
      break;
    }
  }
  ASSERT_NE(dir, std::string::npos);
  for (const auto& [field, value, says] : std::vector<std::tuple<std::size_t, std::uint64_t, std::string>>{
           {24, 0xffffffff, "claims"},         // NumberOfNames
           {24, 900000, "do not fit"},         // more names than the section holds
           {20, 0, "points past"},             // no functions for the ordinals to point at
           {32, 0x7ffff000, "do not fit"},     // name table outside the image
           {20, 0x40000000, "do not fit"}}) {  // a function table that cannot exist
    std::string bad = image_;
    poke(bad, dir + field, value, 4);
    const auto read = read_pe_exports(bytes_of(bad));
    ASSERT_FALSE(read) << "field " << field << " = " << value;
    EXPECT_THAT(read.error().what, HasSubstr(says)) << "field " << field;
  }
}

TEST_F(PeExports, RandomlyDamagedCopiesNeverCrashTheReader) {
  std::mt19937 random(19);
  std::size_t refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = image_;
    // Damage the headers and the export data, where the reader looks.
    for (int k = 0; k < 4; ++k) {
      const std::size_t at = random() % 2 == 0 ? random() % 1024 : random() % bad.size();
      bad[at] = static_cast<char>(random());
    }
    const auto read = read_pe_exports(bytes_of(bad));
    if (!read) {
      ++refused;
      EXPECT_FALSE(read.error().what.empty());
    }
  }
  EXPECT_GT(refused, 0u);
}

TEST(PeExportsInput, NonPeAndEmptyInputAreRefused) {
  const std::string empty;
  EXPECT_THAT(read_pe_exports(bytes_of(empty)).error().what, HasSubstr("not a PE image"));
  const std::string elf =
      "\x7f"
      "ELF\x02\x01\x01";
  EXPECT_THAT(read_pe_exports(bytes_of(elf)).error().what, HasSubstr("not a PE image"));
  const std::string mz_only = "MZ";
  EXPECT_THAT(read_pe_exports(bytes_of(mz_only)).error().what, HasSubstr("truncated"));
  EXPECT_FALSE(read_pe_exports_file("/nonexistent/x.pyd"));
}

TEST(SymbolNames, MsvcDecoratedNamesGiveTheirQualifiedName) {
  EXPECT_EQ(msvc_qualified_name("?mha_fwd@flash@@YA?AV?$vector@VTensor@at@@V?$allocator@VTensor@at@@@std@@@std@@"
                                "AEAVTensor@at@@@Z"),
            "flash::mha_fwd");
  EXPECT_EQ(msvc_qualified_name("?fn@@YAXXZ"), "fn");
  EXPECT_EQ(msvc_qualified_name("?run_mha_fwd@@YAXAEAUFlash_fwd_params@@PEAUCUstream_st@@@Z"), "run_mha_fwd");
  EXPECT_EQ(msvc_qualified_name("?f@ns@1@@YAXXZ"), "ns::ns::f");          // a back-reference to an earlier part
  EXPECT_EQ(msvc_qualified_name("??0Tensor@at@@QEAA@XZ"), std::nullopt);  // a constructor
  EXPECT_EQ(msvc_qualified_name("??$f@H@@YAXH@Z"), std::nullopt);         // a template
  EXPECT_EQ(msvc_qualified_name("?f@ns"), std::nullopt);                  // cut short
  EXPECT_EQ(msvc_qualified_name("?f@9@@YAXXZ"), std::nullopt);            // a reference to nothing
  EXPECT_EQ(symbol_name("PyInit_flash_attn_2_cuda")->qualified, "PyInit_flash_attn_2_cuda");
  EXPECT_EQ(symbol_name("f")->signature, "f");  // a plain name is not read as a mangled type
}

}  // namespace
}  // namespace fabuild
