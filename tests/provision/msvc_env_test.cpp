// The MSVC environment capture on Linux: cmd.exe is a fake command runner that answers as
// `cmd /d /u /c %FABUILD_VCVARS_BAT%` does on Windows (it runs vcvarsall.bat and writes `set`'s
// output, in UTF-16, to the file FABUILD_VCVARS_OUT names); vcvarsall.bat is a real file, whose size and
// modification time key the cache.

#include "provision/msvc_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include "../support/scratch_dir.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

std::string utf16(const std::string& ascii_or_utf8_bmp) {
  std::string out = "\xff\xfe";  // what cmd /u writes has no BOM; both are read
  for (std::size_t i = 0; i < ascii_or_utf8_bmp.size(); ++i) {
    std::uint32_t cp = static_cast<unsigned char>(ascii_or_utf8_bmp[i]);
    if (cp >= 0xc0) {  // two-byte UTF-8 is all these tests use
      cp = ((cp & 0x1f) << 6) | (static_cast<unsigned char>(ascii_or_utf8_bmp[++i]) & 0x3f);
    }
    out += static_cast<char>(cp & 0xff);
    out += static_cast<char>(cp >> 8);
  }
  return out;
}

TEST(SetOutput, NamesWithoutCaseValuesVerbatimBannersSkipped) {
  const EnvList env = parse_set_output(
      "**********************************************************************\r\n"
      "** Visual Studio 2022 Developer Command Prompt v17.14.4\r\n"
      "[vcvarsall.bat] Environment initialized for: 'x64'\r\n"
      "ALLUSERSPROFILE=C:\\ProgramData\r\n"
      "CL=/DX=1 /DY=2\r\n"
      "Path=C:\\Windows\r\n"
      "PATH=C:\\VS\\bin;C:\\Windows\r\n"
      "NVCC_THREADS=1 \r\n"
      "EMPTY=\r\n"
      "=C:=C:\\\r\n"
      "\r\n");
  EXPECT_THAT(env, ElementsAre(Pair("ALLUSERSPROFILE", "C:\\ProgramData"), Pair("CL", "/DX=1 /DY=2"),
                               Pair("Path", "C:\\VS\\bin;C:\\Windows"), Pair("NVCC_THREADS", "1 "), Pair("EMPTY", "")));
}

TEST(CmdOutput, Utf16IsDecodedOtherBytesKept) {
  EXPECT_EQ(decode_cmd_output(utf16("A=C:\\Users\xc3\xa9\r\n")), "A=C:\\Users\xc3\xa9\r\n");
  std::string no_bom = utf16("X=1").substr(2);
  EXPECT_EQ(decode_cmd_output(no_bom), "X=1");
  const std::string pair = std::string("\x3d\xd8\x00\xde", 4);  // U+1F600 as a surrogate pair
  EXPECT_EQ(decode_cmd_output("\xff\xfe" + pair), "\xf0\x9f\x98\x80");
  EXPECT_EQ(decode_cmd_output(std::string("\xff\xfe\x00\xd8", 4)), "\xef\xbf\xbd");  // a lone surrogate
  EXPECT_EQ(decode_cmd_output("PATH=C:\\x"), "PATH=C:\\x");
}

TEST(EnvChanges, PrependsAppendsAndSetsAgainstTheEnvironmentItStartedFrom) {
  const EnvList before = {{"Path", "C:\\Windows"}, {"LIB", "C:\\mine"}, {"KEEP", "x"}, {"TMP", "C:\\a"}};
  const EnvList after = {{"PATH", "C:\\VS\\bin;C:\\Kits\\bin;C:\\Windows"},
                         {"LIB", "C:\\mine;C:\\VS\\lib"},
                         {"KEEP", "x"},
                         {"TMP", "C:\\b"},
                         {"INCLUDE", "C:\\VS\\include"},
                         {"FABUILD_VCVARS_OUT", "C:\\x.txt"}};
  const auto changes = env_changes(before, after, {"fabuild_vcvars_out"});
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0], (EnvChange{EnvChange::Kind::kPrepend, "PATH", "C:\\VS\\bin;C:\\Kits\\bin;", true}));
  EXPECT_EQ(changes[1], (EnvChange{EnvChange::Kind::kAppend, "LIB", ";C:\\VS\\lib", true}));
  EXPECT_EQ(changes[2], (EnvChange{EnvChange::Kind::kSet, "TMP", "C:\\b", true}));
  EXPECT_EQ(changes[3], (EnvChange{EnvChange::Kind::kSet, "INCLUDE", "C:\\VS\\include", false}));

  // Applied to another run's environment, the prepend keeps that run's own PATH behind it.
  const Environment later = apply_env_changes(Environment{{"Path", "C:\\Python;C:\\Windows"}}, changes);
  EXPECT_EQ(later.list().front(),
            std::make_pair(std::string("Path"), std::string("C:\\VS\\bin;C:\\Kits\\bin;C:\\Python;C:\\Windows")));
  EXPECT_EQ(windows_env_value(later.list(), "include"), "C:\\VS\\include");
  EXPECT_EQ(windows_env_value(later.list(), "LIB"), ";C:\\VS\\lib");

  EXPECT_THAT(describe_env_changes(changes),
              ElementsAre("~ PATH: 2 entries in front: C:\\VS\\bin;C:\\Kits\\bin", "~ LIB: 1 entry after: C:\\VS\\lib",
                          "~ TMP=C:\\b", "+ INCLUDE=C:\\VS\\include"));
}

// cmd.exe as the fake runner plays it: `cmd /d /u /c %FABUILD_VCVARS_BAT%` runs the batch file
// the variable names, which calls vcvarsall.bat and has `set` write to FABUILD_VCVARS_OUT.
// `set_output` is what `set` prints after vcvarsall.bat ran.
class FakeCmd : public CommandRunner {
 public:
  CommandResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    std::chrono::milliseconds) override {
    calls.push_back(argv);
    const Environment vars = Environment::parse(env);
    vars_.push_back(vars);
    ExitStatus status;
    status.code = exit_code;
    const std::string bat = vars.value("FABUILD_VCVARS_BAT");
    EXPECT_TRUE(bat.size() > 2 && bat.front() == '"' && bat.back() == '"') << bat;
    bat_text = slurp(bat.substr(1, bat.size() - 2));
    if (exit_code == 0) std::ofstream(vars.value("FABUILD_VCVARS_OUT"), std::ios::binary) << utf16(set_output);
    return CommandResult{status, utf16(banner)};
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  [[nodiscard]] std::string var(std::size_t call, const std::string& name) const { return vars_.at(call).value(name); }
  std::string set_output;
  std::string banner = "** Visual Studio 2022 Developer Command Prompt v17.14.4\r\n";
  int exit_code = 0;
  std::vector<std::vector<std::string>> calls;
  std::string bat_text;

 private:
  std::vector<Environment> vars_;
};

class Capture : public ::testing::Test {
 protected:
  void SetUp() override {
    vcvarsall = dir.path() / "Program Files (x86)" / "Microsoft Visual Studio" / "vcvarsall.bat";
    fs::create_directories(vcvarsall.parent_path());
    std::ofstream(vcvarsall) << "@echo off\r\n";
    cmd.set_output =
        "ComSpec=C:\\Windows\\system32\\cmd.exe\r\nPath=C:\\VS\\bin\\Hostx64\\x64;C:\\Windows\r\n"
        "INCLUDE=C:\\VS\\include;C:\\Kits\\ucrt\r\nLIB=C:\\VS\\lib\\x64\r\nVSCMD_VER=17.14.4\r\n"
        "VCToolsVersion=14.44.35207\r\nFABUILD_VCVARS_OUT=C:\\x.txt\r\nPROMPT=$P$G\r\n";
  }
  Expected<MsvcEnvironment> capture(const std::string& toolset = "") {
    const auto key = vcvars_key(vcvarsall.string(), toolset);
    EXPECT_TRUE(key);
    return capture_msvc_environment(cmd, own, *key, dir.path() / "cache");
  }

  test::ScratchDir dir{"msvc-capture"};
  fs::path vcvarsall;
  FakeCmd cmd;
  Environment own{{"ComSpec", "C:\\Windows\\system32\\cmd.exe"}, {"Path", "C:\\Windows"}};
};

TEST_F(Capture, RunsVcvarsallThroughCmdAndKeepsWhatItChanged) {
  const auto msvc = capture("14.38");
  ASSERT_TRUE(msvc) << msvc.error().what;
  // No argv element holds a quote or a space: the paths reach cmd and the batch file through variables.
  EXPECT_THAT(cmd.calls.at(0), ElementsAre("C:\\Windows\\system32\\cmd.exe", "/d", "/u", "/c", "%FABUILD_VCVARS_BAT%"));
  EXPECT_EQ(cmd.bat_text, "@call \"%FABUILD_VCVARSALL%\" %FABUILD_VCVARS_ARGS%&& set > \"%FABUILD_VCVARS_OUT%\"\r\n");
  EXPECT_EQ(cmd.var(0, "FABUILD_VCVARSALL"), vcvarsall.string());
  EXPECT_EQ(cmd.var(0, "FABUILD_VCVARS_ARGS"), "x64 -vcvars_ver=14.38");
  EXPECT_FALSE(msvc->from_cache);
  EXPECT_EQ(msvc->vs_version, "17.14.4");
  EXPECT_EQ(msvc->tools_version, "14.44.35207");
  std::vector<std::string> names;
  for (const auto& c : msvc->changes) names.push_back(c.name);
  EXPECT_THAT(names, ElementsAre("Path", "INCLUDE", "LIB", "VSCMD_VER", "VCToolsVersion"));  // not its own variables
  EXPECT_EQ(msvc->changes[0].kind, EnvChange::Kind::kPrepend);
  // The file `set` wrote is gone; the capture is in the cache, beside the batch file.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path() / "cache" / "msvc")) files += e.path().extension() == ".json";
  EXPECT_EQ(files, 1u);
}

TEST_F(Capture, TheCacheServesTheSameKeyAndAChangedVcvarsallIsCapturedAgain) {
  ASSERT_TRUE(capture());
  ASSERT_TRUE(capture());
  EXPECT_EQ(cmd.calls.size(), 1u);  // the second came from the cache
  const auto cached = capture();
  ASSERT_TRUE(cached);
  EXPECT_TRUE(cached->from_cache);
  EXPECT_EQ(cached->changes.size(), 5u);
  EXPECT_EQ(cached->tools_version, "14.44.35207");

  ASSERT_TRUE(capture("14.38"));  // another toolset is another capture
  EXPECT_EQ(cmd.calls.size(), 2u);
  std::ofstream(vcvarsall, std::ios::app) << "rem updated by the Visual Studio Installer\r\n";
  ASSERT_TRUE(capture());  // a changed vcvarsall.bat too
  EXPECT_EQ(cmd.calls.size(), 3u);
}

TEST_F(Capture, AFailedVcvarsallNamesTheCommandItsExitAndItsLastLines) {
  cmd.exit_code = 1;
  cmd.banner = "[ERROR:vcvarsall.bat] Invalid argument found : x64\r\n[ERROR:vcvarsall.bat] Error in script usage.\r\n";
  const auto msvc = capture();
  ASSERT_FALSE(msvc);
  EXPECT_THAT(msvc.error().what, HasSubstr("capturing the MSVC environment failed"));
  EXPECT_THAT(msvc.error().what, HasSubstr("cmd.exe /d /u /c %FABUILD_VCVARS_BAT%"));
  EXPECT_THAT(msvc.error().what, HasSubstr(vcvarsall.string()));
  EXPECT_THAT(msvc.error().what, HasSubstr("exit 1"));
  EXPECT_THAT(msvc.error().what, HasSubstr("Error in script usage."));
  EXPECT_THAT(msvc.error().hint, HasSubstr("Developer Command Prompt"));
  EXPECT_THAT(msvc.error().hint, HasSubstr("toolchains/host.yaml"));
  for (const auto& e : fs::directory_iterator(dir.path() / "cache" / "msvc")) {
    EXPECT_EQ(e.path().filename(), "vcvars-capture.bat");  // no capture kept, no `set` output left
  }
}

TEST_F(Capture, ARunThatSetsNoIncludeIsAFailureNotAnEnvironment) {
  cmd.set_output = "Path=C:\\Windows\r\n[ERROR:vcvars.bat] Toolset directory for version '14.20' was not found.\r\n";
  const auto msvc = capture("14.20");
  ASSERT_FALSE(msvc);
  EXPECT_THAT(msvc.error().what, HasSubstr("exited 0 but set no INCLUDE"));
}

TEST(VcvarsKey, AMissingVcvarsallIsNamed) {
  const auto key = vcvars_key("/nonexistent/VC/Auxiliary/Build/vcvarsall.bat", "");
  ASSERT_FALSE(key);
  EXPECT_THAT(key.error().what, HasSubstr("/nonexistent/VC/Auxiliary/Build/vcvarsall.bat"));
}

}  // namespace
}  // namespace fabuild
