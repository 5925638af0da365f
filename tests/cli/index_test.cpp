// `fabuild index` and what a build publishes at its end, through the real binary.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "../support/scratch_dir.h"
#include "../support/wheel_writer.h"
#include "run_binary.h"
#include "wheel/wheelhouse.h"
#include "wheel/wheelhouse_lock.h"

namespace fabuild {
namespace {

namespace fs = std::filesystem;
using test::run_fabuild;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(IndexCommand, HelpSaysWhatItWritesAndTheMainHelpNamesIt) {
  const auto r = run_fabuild({"index", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("fabuild index"));
  EXPECT_THAT(r.out, HasSubstr("<cuXYZ>/torch<series>/simple/"));
  EXPECT_THAT(r.out, HasSubstr("--base-url"));
  EXPECT_THAT(run_fabuild({"--help"}).out, HasSubstr("fabuild index [WHEELHOUSE]"));
}

TEST(IndexCommand, AWheelhouseThatIsNotThereIsExit2) {
  test::ScratchDir dir("fabuild-index-cli");
  const auto r = run_fabuild({"index", (dir.path() / "missing").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("fabuild: error: " + (dir.path() / "missing").string() + ": the wheelhouse does not exist"));
  EXPECT_THAT(r.err, HasSubstr("hint: give the directory fabuild built into"));
  EXPECT_EQ(run_fabuild({"index", dir.path().string(), "--base-url", "wheels/"}).code, 2);
  EXPECT_EQ(run_fabuild({"index", "--no-such-flag"}).code, 2);
}

// While a build holds the wheelhouse, `fabuild index` and `fabuild merge` into it refuse (exit 4,
// naming the build) or, with --wait-lock, wait for it and then do their work.
TEST(IndexCommand, IndexAndMergeTakeTurnsWithABuild) {
  test::ScratchDir dir("fabuild-index-cli");
  const fs::path house = dir.path() / "wheelhouse";
  const fs::path part = dir.path() / "part";
  fs::create_directories(house / "fa2.8.3/torch2.8/cu128");
  test::TestWheel().write(house / "fa2.8.3/torch2.8/cu128");
  std::ofstream(house / "manifest.json") << "{\"cells\": {}}\n";  // a fabuild wheelhouse
  fs::create_directories(part);
  std::optional<WheelhouseLock> build = WheelhouseLock::take(house, "fabuild nightly.yaml", false).value();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"index", house.string()},
        std::vector<std::string>{"merge", part.string(), "-o", house.string()}}) {
    const auto refused = run_fabuild(args);
    EXPECT_EQ(refused.code, 4) << refused.err;
    EXPECT_THAT(refused.err, HasSubstr("another fabuild is building into this wheelhouse"));
    EXPECT_THAT(refused.err, HasSubstr("(fabuild nightly.yaml)"));
    EXPECT_THAT(refused.err, HasSubstr("--wait-lock"));
  }
  EXPECT_FALSE(fs::exists(house / "index.html")) << "index wrote while refused";
  EXPECT_EQ(run_fabuild({"merge", "--dry-run", part.string(), "-o", house.string()}).code, 0)
      << "a dry run locks nothing";
  const auto waiting = test::spawn_fabuild({"index", house.string(), "--wait-lock"}, dir.path().string());
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_FALSE(fs::exists(house / "index.html")) << "index did not wait";
  build.reset();
  const auto done = test::wait_fabuild(waiting, std::chrono::seconds(30));
  EXPECT_EQ(done.code, 0) << done.err;
  EXPECT_THAT(done.out, HasSubstr("waiting for " + house.string()));
  EXPECT_TRUE(fs::exists(house / "index.html"));
}

TEST(IndexCommand, DefaultsToWheelhouseHereAndNamesWheelsItCannotPublish) {
  test::ScratchDir dir("fabuild-index-cli");
  const fs::path cu128 = dir.path() / "wheelhouse/fa2.8.3/torch2.8/cu128";
  fs::create_directories(cu128);
  test::TestWheel().write(cu128);
  std::ofstream(cu128 / "flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl") << "truncated download";
  // Wheels copied into a directory of their own: fabuild's from now on (--adopt makes its manifest).
  const auto r = run_fabuild({"index", "--adopt"}, dir.path().string());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fabuild: index: 1 wheel of 1 project in wheelhouse/simple/ and 1 variant index"));
  EXPECT_THAT(
      r.err,
      HasSubstr("not published: wheelhouse/fa2.8.3/torch2.8/cu128/flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl: "
                "cannot open it as a zip archive"));
  const std::string page = test::slurp(dir.path() / "wheelhouse/cu128/torch2.8/simple/flash-attn/index.html");
  EXPECT_THAT(page, HasSubstr("cp312-cp312-linux_x86_64.whl#sha256="));
  EXPECT_THAT(page, Not(HasSubstr("cp311")));
  fs::remove(cu128 / "flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl");
  EXPECT_EQ(run_fabuild({"index", "-q"}, dir.path().string()).code, 0);
}

// A filed wheel replaced behind fabuild's back (another valid wheel of the same name) is not
// published: its hash would contradict the SHA256SUMS beside it. Once SHA256SUMS and the wheel
// agree again, it is.
// A directory that is not a fabuild wheelhouse (a pip mirror's pages, the owner's index.html and
// a wheel) is refused and left byte for byte as it was; --adopt replaces none of its pages.
TEST(IndexCommand, ADirectoryThatIsNotAFabuildWheelhouseIsLeftAsItWas) {
  test::ScratchDir dir("fabuild-index-mirror");
  const fs::path mirror = dir.path() / "mirror";
  fs::create_directories(mirror / "simple/requests");
  std::ofstream(mirror / "simple/requests/index.html") << "<html>requests</html>\n";
  std::ofstream(mirror / "simple/index.html") << "<html>the mirror's root</html>\n";
  std::ofstream(mirror / "index.html") << "<html>the owner's page</html>\n";
  test::TestWheel().write(mirror);
  const auto files = [&] {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(mirror)) {
      if (e.is_regular_file()) out[e.path().lexically_relative(mirror).string()] = test::slurp(e.path());
    }
    return out;
  };
  const auto before = files();
  auto r = run_fabuild({"index", mirror.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("has no manifest.json: it is not a fabuild wheelhouse"));
  EXPECT_THAT(r.err, HasSubstr("--adopt"));
  EXPECT_EQ(files(), before);
  r = run_fabuild({"index", mirror.string(), "--adopt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("index.html, simple/index.html are not fabuild's, and fabuild would replace them"));
  EXPECT_EQ(files(), before) << "not even its lock, its cache or a wheel's METADATA";

  // Only the wheel's own project page is the mirror's: known from the wheel's name, refused before
  // a wheel is read.
  fs::remove(mirror / "index.html");
  fs::remove(mirror / "simple/index.html");
  fs::create_directories(mirror / "simple/flash-attn");
  std::ofstream(mirror / "simple/flash-attn/index.html") << "<html>the mirror's flash-attn</html>\n";
  const auto mirror_only = files();
  r = run_fabuild({"index", mirror.string(), "--adopt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("simple/flash-attn/index.html is not fabuild's, and fabuild would replace it"));
  EXPECT_EQ(files(), mirror_only);
}

TEST(IndexCommand, AWheelReplacedAfterFilingIsNotPublished) {
  test::ScratchDir dir("fabuild-index-cli");
  const fs::path cu128 = dir.path() / "wheelhouse/fa2.8.3/torch2.8/cu128";
  fs::create_directories(cu128);
  test::TestWheel filed;
  const fs::path wheel = filed.write(cu128);
  EXPECT_TRUE(write_sha256sums(cu128));
  ASSERT_EQ(run_fabuild({"index", "-q", "--adopt"}, dir.path().string()).code, 0);
  test::TestWheel other = filed;
  other.files["flash_attn/__init__.py"] = "__version__ = \"2.8.3\"  # rebuilt elsewhere\n";
  other.write(cu128);
  const auto r = run_fabuild({"index"}, dir.path().string());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("not published: wheelhouse/fa2.8.3/torch2.8/cu128/" + filed.file_name() + ": its sha256 is "));
  EXPECT_THAT(r.err, HasSubstr("but SHA256SUMS beside it lists"));
  const std::string page = test::slurp(dir.path() / "wheelhouse/cu128/torch2.8/simple/flash-attn/index.html");
  EXPECT_THAT(page, Not(HasSubstr(filed.file_name())));
  EXPECT_TRUE(write_sha256sums(cu128));  // the replacement made official
  EXPECT_EQ(run_fabuild({"index", "-q"}, dir.path().string()).code, 0);
}

TEST(IndexCommand, ABuildRecordsItsRunAndPublishesAtItsEnd) {
  test::ScratchDir dir("fabuild-index-cli");
  test::TestWheel w;
  w.write(dir.path());  // the cp312 cell "builds" this wheel; the cp311 one fails
  const std::string matrix = (dir.path() / "m.yaml").string();
  std::ofstream(matrix)
      << "versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp311, cp312]\n"
         "archs: \"90\"\nbudget: {cores: 4, memory_gb: 40, reserve_gb: 0}\n"
         "command: [sh, -c, 'if [ {python} = cp311 ]; then echo \"error: out of memory\"; exit 2; fi; cp "
      << (dir.path() / w.file_name()).string() << " {out}/']\n";
  const auto r = run_fabuild({matrix, "-o", (dir.path() / "house").string()}, dir.path().string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("fabuild: index: 1 wheel of 1 project"));
  const fs::path house = dir.path() / "house";

  const auto report = nlohmann::json::parse(test::slurp(house / "report.json"));
  ASSERT_EQ(report["cells"].size(), 2u);
  const auto& failed = report["cells"][0];
  EXPECT_EQ(failed["id"], "fa2.8.3-torch2.8-cu128-cp311-linux_x86_64");
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["detail"], "exit 2");
  EXPECT_EQ(failed["log"], "logs/fa2.8.3-torch2.8-cu128-cp311-linux_x86_64.log");
  const auto& ok = report["cells"][1];
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_EQ(ok["wheel"], "fa2.8.3/torch2.8/cu128/" + w.file_name());
  EXPECT_EQ(ok["sha256"].get<std::string>().size(), 64u);
  EXPECT_GT(ok["size"].get<int>(), 0);
  EXPECT_GT(ok["max_jobs"].get<int>(), 0);
  EXPECT_GT(ok["nvcc_threads"].get<int>(), 0);
  EXPECT_TRUE(ok["start_s"].is_number());
  EXPECT_THAT(ok["toolchain"].get<std::string>(), Not(HasSubstr("?")));
  EXPECT_EQ(report["exit_code"], 1);

  const std::string summary = test::slurp(house / "summary.md");
  EXPECT_THAT(summary, HasSubstr("1 ok, 0 up to date, 1 failed"));
  EXPECT_THAT(summary,
              HasSubstr("log: `" + (house / "logs/fa2.8.3-torch2.8-cu128-cp311-linux_x86_64.log").string() + "`"));
  const std::string page = test::slurp(house / "index.html");
  EXPECT_THAT(page, HasSubstr("href=\"logs/fa2.8.3-torch2.8-cu128-cp311-linux_x86_64.log\""));
  EXPECT_THAT(test::slurp(house / "simple/flash-attn/index.html"), HasSubstr("data-core-metadata=\"sha256="));
}

}  // namespace
}  // namespace fabuild
